// The transaction every change of an organisation's data runs in (an import, the removal
// of a merit cycle; change.ts): no other change of the organisation can interleave with
// it, so its stamps follow commit order; and what may have changed the data the API
// shows, so it is announced here (src/db/data-revision.ts).
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { Database } from '../db/types.js';

type Tx = Kysely<Database>;

// SQLite's page cache for a change (the connection's default is 2 MB): merging a large
// cycle touches its table and three indexes all over, and re-reading evicted pages was
// most of the time of a 500,000-employee cycle. Restored afterwards. Counted in KiB.
export const SQLITE_CHANGE_CACHE_KIB = 64 * 1024;

/**
 * Runs `work` in a transaction that no other change can interleave with: SQLite takes the
 * write lock at BEGIN IMMEDIATE; PostgreSQL takes a per-organisation advisory lock when
 * `lock(slug)` is called — before any stored row of the organisation is read. Once `work`
 * has succeeded, servers on other processes learn of the commit (PostgreSQL: a
 * notification sent only if it commits; SQLite's own check sees it), and so does this
 * process's response cache once it has committed.
 */
export async function inOrganizationTransaction<T>(
  database: DatabaseHandle,
  work: (trx: Tx, lock: (slug: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const result = await inTransaction(database, async (trx, lock) => {
    const result = await work(trx, lock);
    await database.revision.announce(trx);
    return result;
  });
  database.revision.changed();
  return result;
}

async function inTransaction<T>(
  { longDb: db, dialect }: DatabaseHandle,
  work: (trx: Tx, lock: (slug: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  // Long work (src/db/connect.ts): an import's statements are as large as its largest
  // cycle; they run as long as they need while the server answers.
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      // Also where a statement timeout is set on the database role (PgBouncer, see
      // docs/operations.md): an import's statements have none.
      await sql`set local statement_timeout = 0`.execute(trx);
      // ANALYZE of the import's staging tables samples 3,000 rows, not the default 30,000:
      // the plans need their sizes and which columns are unique, not fine histograms; 18 ms
      // instead of 186 ms for 50,000 staged employees.
      await sql`set local default_statistics_target = 10`.execute(trx);
      return work(trx, (slug) => lockOrganizationChanges(trx, 'postgres', slug));
    });
  }
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(connection);
    const cacheSize = rows[0]?.cache_size ?? -2000;
    await sql.raw(`pragma cache_size = -${SQLITE_CHANGE_CACHE_KIB}`).execute(connection);
    try {
      await sql`begin immediate`.execute(connection);
      try {
        const result = await work(connection, async () => undefined);
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection);
        throw error;
      }
    } finally {
      await sql.raw(`pragma cache_size = ${cacheSize}`).execute(connection);
    }
  });
}

/**
 * Waits for the organisation's change in progress, if any, and keeps the next one waiting
 * until this transaction ends: what a change takes first (PostgreSQL's advisory lock; on
 * SQLite the write lock of BEGIN IMMEDIATE is the same for every change). A new key's
 * slice takes it too, so that its members and an import's are never computed past each
 * other (src/row-slices/).
 */
export async function lockOrganizationChanges(
  trx: Tx,
  dialect: 'sqlite' | 'postgres',
  slug: string,
): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtext(${`compplan-import:${slug}`}))`.execute(trx);
}
