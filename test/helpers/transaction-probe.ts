// Watches a database for an import's transaction, from outside the process running it:
// SQLite's write lock is taken; on PostgreSQL a compplan connection's transaction has
// written (created the import's staging table, its first statement). No hook in the code
// is needed, and nothing is guessed from timing: a test that must act while an import runs
// (kill it, signal it) waits for this.
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/config.js';

/** True while an import's transaction holds the database. */
export interface TransactionProbe {
  inTransaction(): Promise<boolean>;
  close(): Promise<void>;
}

export async function probeFor(database: DatabaseConfig): Promise<TransactionProbe> {
  if (database.dialect === 'sqlite') {
    // No busy wait: BEGIN IMMEDIATE fails at once while the import holds the write lock.
    const sqlite = new SQLite(database.path, { timeout: 0 });
    return {
      async inTransaction() {
        try {
          sqlite.exec('BEGIN IMMEDIATE');
          sqlite.exec('ROLLBACK');
          return false;
        } catch (error) {
          if ((error as { code?: string }).code === 'SQLITE_BUSY') return true;
          throw error;
        }
      },
      async close() {
        sqlite.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    async inTransaction() {
      // The import's transaction has begun once it has written: its staging table is
      // created first, and that gives the transaction an id. (Its advisory lock comes only
      // before the merge at the end of the file: too late to see the whole transaction.)
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and application_name = 'compplan'
            and backend_xid is not null`,
      );
      return (rows[0]?.n ?? 0) > 0;
    },
    async close() {
      await client.end();
    },
  };
}

/**
 * Resolves with Date.now() once `probe` sees the transaction of the import `child` runs;
 * fails if the process ends first (`output` says why) or after `timeoutMs`.
 */
export async function waitForTransaction(
  probe: TransactionProbe,
  child: ChildProcess,
  output: () => string,
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe.inTransaction()) return Date.now();
    if (child.exitCode !== null) throw new Error(`the import ended first: ${output()}`);
    await sleep(5);
  }
  throw new Error('the import never began its transaction');
}
