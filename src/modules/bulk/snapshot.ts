// One consistent view of the database for as long as a bulk download reads it
// (docs/bulk-download.md, "One snapshot"): a read transaction on a connection of the
// download's own, so that an import committing meanwhile is wholly in what it reads or
// wholly absent.
//
// - SQLite: the file opened again, read-only (DatabaseHandle.openReader); in WAL mode the
//   transaction's first read fixes what it sees, and an import goes on writing meanwhile.
// - PostgreSQL: a client of the pool in a REPEATABLE READ, READ ONLY transaction: every
//   statement in it sees the data as of its first one, the COPY that reads the texts too
//   (src/db/postgres-copy.ts).
//
// Either way the transaction ends, and the connection goes back, when `close` is called:
// at the end of the download or as soon as its client leaves.
import { sql } from 'kysely';
import type { DatabaseHandle, Db } from '../../db/connect.js';
import type { CopyOut } from '../../db/postgres-copy.js';

export interface Snapshot {
  /** The snapshot's connection, in its transaction. */
  readonly db: Db;
  /** PostgreSQL: COPY … TO STDOUT on that connection, in that transaction. */
  readonly copyOut?: CopyOut;
  /** Ends the transaction and gives the connection back; resolves once it has. */
  close(): Promise<void>;
}

const BEGIN = {
  sqlite: 'begin',
  postgres: 'begin isolation level repeatable read, read only',
} as const;

export function openSnapshot(database: DatabaseHandle): Promise<Snapshot> {
  const reader = database.openReader();
  return new Promise<Snapshot>((resolve, reject) => {
    let opened = false;
    // Kysely's connection() holds one connection for as long as the callback runs: the
    // callback waits here until close() is called.
    const over = reader.db
      .connection()
      .execute(async (connection) => {
        await sql.raw(BEGIN[database.dialect]).execute(connection);
        let end = () => {};
        const ended = new Promise<void>((done) => {
          end = done;
        });
        opened = true;
        resolve({
          db: connection,
          ...(reader.copyOut && { copyOut: reader.copyOut }),
          close: () => {
            end();
            return over;
          },
        });
        await ended;
        // Nothing was written: rolling back ends the transaction at once.
        await sql`rollback`.execute(connection);
      })
      .catch((error: unknown) => {
        // Before the snapshot was handed out, the caller hears of it; after, the end of
        // a transaction on a connection that failed has nothing more to report.
        if (!opened) reject(error);
      })
      .finally(() => reader.release());
  });
}
