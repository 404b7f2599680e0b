// Opens the database named by the configuration: the embedded SQLite file, or a
// PostgreSQL pool. Everything above this file sees only a Kysely<Database>.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { type DataRevision, postgresRevision, sqliteRevision } from './data-revision.js';
import { withNamedStatements, withStatementCache } from './statement-cache.js';
import type { Database } from './types.js';

export type Db = Kysely<Database>;
export type Dialect = DatabaseConfig['dialect'];

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface DatabaseHandle {
  readonly db: Db;
  readonly dialect: Dialect;
  /** Whether imported data may have changed (data-revision.ts): the response cache's check. */
  readonly revision: DataRevision;
  /** Connection pool figures, for metrics; undefined for the embedded database. */
  poolStats?(): PoolStats;
  /** Connections in the pool (src/db/fair-turns.ts); undefined for the embedded database,
   * whose statements run one at a time on the event loop and wait for nothing. */
  readonly poolSize?: number;
  /**
   * SQLite: takes the write lock and writes, then rolls back, so that a database that
   * cannot be written (a read-only file) or is held by another writer fails now, before
   * a command reads its input, rather than at its first write. Undefined for PostgreSQL.
   */
  checkWritable?(): void;
  /**
   * A database handle whose `connection()` is a connection of the reader's own, for a long
   * read in one transaction (the bulk download, src/modules/bulk/snapshot.ts): SQLite
   * opens the file again, read-only, beside the one connection every request shares;
   * PostgreSQL checks a client out of the pool. `release` once the read is over.
   */
  openReader(): { db: Db; release(): Promise<void> };
}

// A request never waits longer than this for PostgreSQL: a slow or stuck query becomes
// an error the client sees (503/504) instead of a hung connection.
const POSTGRES_STATEMENT_TIMEOUT_MS = 5_000;
const POSTGRES_CONNECT_TIMEOUT_MS = 3_000;
// Two cores serve the API; more connections than this only queue inside PostgreSQL.
const POSTGRES_POOL_SIZE = 10;
// How long a SQLite writer waits for another one (an import holds the lock throughout)
// before it fails with SQLITE_BUSY. src/cli/database-failures.ts names it in its message.
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface OpenOptions {
  /**
   * Called with errors of pooled connections outside a query (PostgreSQL restarted,
   * network cut). The pool drops such a connection and opens a new one when next needed.
   */
  onIdleError?: (error: Error) => void;
}

export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): DatabaseHandle {
  if (config.dialect === 'sqlite') {
    if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true });
    const sqlite = new SQLite(config.path);
    try {
      // The busy timeout makes a second writer wait for the first instead of failing at
      // once; set first, so that switching a new database to WAL waits as well. WAL lets
      // readers (the API) and a writer (an import) work at once.
      sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
      sqlite.pragma('foreign_keys = ON');
    } catch (error) {
      sqlite.close();
      throw error;
    }
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
    });
    return {
      db,
      dialect: 'sqlite',
      revision: sqliteRevision(sqlite),
      checkWritable() {
        sqlite.exec('begin immediate');
        try {
          // Rewrites the header's user_version with its own value: a write SQLite
          // refuses for a read-only file (BEGIN IMMEDIATE alone does not).
          const version = Number(sqlite.pragma('user_version', { simple: true }));
          sqlite.pragma(`user_version = ${version}`);
        } finally {
          sqlite.exec('rollback');
        }
      },
      openReader() {
        // An in-memory database exists only on its one connection, which a long read
        // would hold from every other query (only the OpenAPI document is built on one).
        if (config.path === ':memory:') {
          throw new Error('an in-memory database has no connection to spare for a long read');
        }
        const reader = new SQLite(config.path, { readonly: true, fileMustExist: true });
        reader.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
        const readerDb = new Kysely<Database>({ dialect: new SqliteDialect({ database: reader }) });
        return { db: readerDb, release: () => readerDb.destroy() };
      },
    };
  }
  // Loaded only for a PostgreSQL URL: every `compplan` process (one per imported file)
  // would otherwise pay for the driver's modules at start-up, SQLite or not. `pg` is
  // CommonJS, so require() loads it synchronously and openDatabase stays synchronous.
  const { Pool } = createRequire(import.meta.url)('pg') as typeof pg;
  const pool = new Pool({
    connectionString: config.url,
    max: POSTGRES_POOL_SIZE,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    statement_timeout: POSTGRES_STATEMENT_TIMEOUT_MS,
    application_name: 'compplan',
  });
  // A connection that fails outside a query (PostgreSQL shut down or restarted, the
  // network cut) emits 'error' on its client — idle in the pool, or checked out between
  // two statements — and without a listener Node would end the process. The pool drops
  // such a connection; the next query opens a new one.
  const onError = (error: Error) => options.onIdleError?.(error);
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: withNamedStatements(pool) }),
  });
  return {
    db,
    dialect: 'postgres',
    revision: postgresRevision(config.url),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    poolSize: POSTGRES_POOL_SIZE,
    // Kysely's connection() checks a client of the pool out for as long as it runs.
    openReader: () => ({ db, release: async () => undefined }),
  };
}
