// A transaction that reads and then writes. On SQLite it takes the write lock at its start
// (BEGIN IMMEDIATE): a deferred transaction reads from a snapshot, and when another
// connection (another `compplan` process, another instance) commits before it writes, its
// write fails at once with SQLITE_BUSY_SNAPSHOT instead of waiting its turn; so did two
// `keys create` of new slices made side by side. Taken at the start, the lock is waited
// for (busy_timeout) like any other, or, with `wait: false`, not at all: SQLITE_BUSY at
// once, for a writer on the server's event loop (the audit log, the webhook dispatcher),
// where better-sqlite3's wait would stop every request of the process. On PostgreSQL an
// ordinary transaction.
import { sql } from 'kysely';
import { type Db, dialectOf } from './connect.js';

export function inWriteTransaction<T>(
  db: Db,
  work: (trx: Db) => Promise<T>,
  { wait = true }: { wait?: boolean } = {},
): Promise<T> {
  if (dialectOf(db) === 'postgres') return db.transaction().execute(work);
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(connection);
    const waited = rows[0]?.timeout ?? 0;
    if (!wait) await sql`pragma busy_timeout = 0`.execute(connection);
    try {
      await sql`begin immediate`.execute(connection);
      try {
        const result = await work(connection);
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection);
        throw error;
      }
    } finally {
      if (!wait) await sql.raw(`pragma busy_timeout = ${waited}`).execute(connection);
    }
  });
}
