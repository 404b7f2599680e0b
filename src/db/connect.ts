// Opens the database named by the configuration: the embedded SQLite file, or a
// PostgreSQL pool. Everything above this file sees only a Kysely<Database>.
import { createRequire } from 'node:module';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
} from 'kysely';
import type pg from 'pg';
import type { DatabaseConfig, PostgresBounds } from '../config.js';
import { type DataRevision, postgresRevision, sqliteRevision } from './data-revision.js';
import { prepareDatabaseFiles, type Tightened, tightenedMessage } from './file-modes.js';
import { LivenessWatch, probeServer } from './liveness.js';
import { type CopyOut, copyOutOf } from './postgres-copy.js';
import { guardedPool } from './postgres-pool.js';
import { registerSqliteFunctions } from './sqlite-functions.js';
import { statementNames, withStatementCache } from './statement-cache.js';
import { POSTGRES_BOUNDS } from './timeouts.js';
import type { Database } from './types.js';

export type Db = Kysely<Database>;
export type Dialect = DatabaseConfig['dialect'];

/** Which database a handle (or a transaction of it) talks to. */
export const dialectOf = (db: Db): Dialect =>
  db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface DatabaseHandle {
  /** Every statement bounded (PostgreSQL: src/db/timeouts.ts); for the API and its like. */
  readonly db: Db;
  /**
   * For work whose statements may rightly run long (migrations, an import, a cycle's
   * removal): PostgreSQL lets them run as long as the server answers (src/db/liveness.ts),
   * on connections of their own, closed by `close`. The same as `db` for SQLite.
   */
  readonly longDb: Db;
  readonly dialect: Dialect;
  /** PostgreSQL's bounds (src/db/timeouts.ts); undefined for the embedded database. */
  readonly bounds?: PostgresBounds;
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
   * PostgreSQL checks a client out of the pool, and `copyOut` runs `COPY … TO STDOUT` on
   * that same connection (postgres-copy.ts). `release` once the read is over.
   */
  openReader(): { db: Db; copyOut?: CopyOut; release(): Promise<void> };
  /**
   * Runs long work that writes (an import, or its check rolled back) where it does not hold
   * up `db`'s requests: SQLite opens the file again for it, as `compplan import` does in its
   * own process, and closes that connection after (an in-memory database exists on its one
   * connection only, so the work gets this handle); PostgreSQL's `longDb` has a pool of its
   * own already, so the work gets this handle.
   */
  withOwnConnection<T>(work: (database: DatabaseHandle) => Promise<T>): Promise<T>;
  /**
   * Closes every connection: `db`'s and `longDb`'s. Kysely's destroy of `db` alone ends
   * only a pool it has used, and work done on `longDb` alone (a command's import or
   * migrations) would leave PostgreSQL connections open until their idle timeout.
   */
  close(): Promise<void>;
}

// Two cores serve the API; more connections than this only queue inside PostgreSQL.
const POSTGRES_POOL_SIZE = 10;
// Long work (longDb) runs one transaction at a time: an import, a removal, migrations.
const POSTGRES_LONG_WORK_POOL_SIZE = 2;
// SQLite's page: 16 KiB rather than its 4 KiB default. An employee's stored text is
// about 1 KB with typed columns, and SQLite keeps at most about a quarter of a page of a
// row of an index-ordered (WITHOUT ROWID) table in the page itself: with 4 KiB pages every
// employee spilled into an overflow page of its own, mostly empty. Measured on 100,000
// employees (after a VACUUM each way): the file 499 → 174 MB, a delta page of 100
// changes 1.8 → 0.4 ms, 500 list pages 166–194 → 72–81 ms. 16 KiB leaves room for texts
// of up to about 4 KB (8 KiB measured the same on these, with half the room).
export const SQLITE_PAGE_BYTES = 16_384;
// How long a SQLite writer waits for another one (an import holds the lock throughout)
// before it fails with SQLITE_BUSY. src/cli/database-failures.ts names it in its message.
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface OpenOptions {
  /**
   * Called with errors of pooled connections outside a query (PostgreSQL restarted,
   * network cut). The pool drops such a connection and opens a new one when next needed.
   */
  onIdleError?: (error: Error) => void;
  /**
   * Told of each file of an existing SQLite database that others could read and that was
   * made readable by its owner only (file-modes.ts); without it, a line on stderr.
   */
  onFileModeTightened?: (file: Tightened) => void;
}

export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): DatabaseHandle {
  if (config.dialect === 'sqlite') {
    if (config.path !== ':memory:') {
      for (const file of prepareDatabaseFiles(config.path)) {
        const report = options.onFileModeTightened;
        if (report) report(file);
        else process.stderr.write(`compplan: ${tightenedMessage(file)}\n`);
      }
    }
    const sqlite = new SQLite(config.path);
    try {
      // The busy timeout makes a second writer wait for the first instead of failing at
      // once; set first, so that switching a new database to WAL waits as well. WAL lets
      // readers (the API) and a writer (an import) work at once.
      sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      // Set before anything is written, so that a new database is made with it; an
      // existing one keeps the page size it was made with (docs/operations.md).
      sqlite.pragma(`page_size = ${SQLITE_PAGE_BYTES}`);
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
      sqlite.pragma('foreign_keys = ON');
      registerSqliteFunctions(sqlite);
    } catch (error) {
      sqlite.close();
      throw error;
    }
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
    });
    const handle: DatabaseHandle = {
      db,
      longDb: db,
      dialect: 'sqlite',
      revision: sqliteRevision(sqlite),
      close: () => db.destroy(),
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
        registerSqliteFunctions(reader);
        const readerDb = new Kysely<Database>({ dialect: new SqliteDialect({ database: reader }) });
        return { db: readerDb, release: () => readerDb.destroy() };
      },
      async withOwnConnection(work) {
        if (config.path === ':memory:') return work(handle);
        const own = openDatabase(config);
        try {
          return await work(own);
        } finally {
          await own.close();
        }
      },
    };
    return handle;
  }
  // Loaded only for a PostgreSQL URL: every `compplan` process (one per imported file)
  // would otherwise pay for the driver's modules at start-up, SQLite or not. `pg` is
  // CommonJS, so require() loads it synchronously and openDatabase stays synchronous.
  const { Pool, Client } = createRequire(import.meta.url)('pg') as typeof pg;
  const bounds: PostgresBounds = { ...POSTGRES_BOUNDS, ...config.bounds };
  const common = {
    connectionString: config.url,
    connectionTimeoutMillis: bounds.connectMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: bounds.keepAliveMs,
    application_name: 'compplan',
  };
  const pool = new Pool({
    ...common,
    max: POSTGRES_POOL_SIZE,
    statement_timeout: bounds.statementMs,
  });
  // A connection that fails outside a query (PostgreSQL shut down or restarted, the
  // network cut) emits 'error' on its client — idle in the pool, or checked out between
  // two statements — and without a listener Node would end the process. The pool drops
  // such a connection; the next query opens a new one.
  const onError = (error: Error) => options.onIdleError?.(error);
  const listen = (target: pg.Pool) => {
    target.on('error', onError);
    target.on('connect', (client) => client.on('error', onError));
    return target;
  };
  listen(pool);
  // Opened on first use: a server uses it only for the migrations it applies at start.
  let longWorkPool: pg.Pool | undefined;
  const longWork = () => {
    longWorkPool ??= listen(new Pool({ ...common, max: POSTGRES_LONG_WORK_POOL_SIZE }));
    return longWorkPool;
  };
  const nameOf = statementNames();
  // Once, whoever asks first: Kysely's destroy of `db` or `close` (node-postgres refuses a
  // second end of a pool).
  let closed: Promise<void> | undefined;
  const endPools = () => {
    closed ??= Promise.all([pool.end(), longWorkPool?.end()]).then(() => undefined);
    return closed;
  };
  const requests = guardedPool(() => pool.connect(), endPools, {
    nameOf,
    queryTimeoutMs: bounds.queryMs,
  });
  const watch = new LivenessWatch(probeServer(Client, config.url, bounds), bounds.queryMs);
  // Ended by `close` (endPools, above); Kysely's destroy of longDb ends nothing.
  const long = guardedPool(
    () => longWork().connect(),
    async () => undefined,
    { nameOf, watch },
  );
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: requests }) });
  const handle: DatabaseHandle = {
    db,
    longDb: new Kysely<Database>({ dialect: new PostgresDialect({ pool: long }) }),
    dialect: 'postgres',
    bounds,
    revision: postgresRevision(config.url, bounds),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    poolSize: POSTGRES_POOL_SIZE,
    // One client of the request pool, checked out at the reader's first statement and
    // given back by `release`: Kysely's statements and COPY go through it alike.
    openReader: () => {
      let client: Promise<PostgresPoolClient> | undefined;
      const connected = () => {
        client ??= requests.connect();
        return client;
      };
      const own: PostgresPool = {
        // Kysely releases its connection after each use: the client stays the reader's.
        connect: async () => ({ query: (await connected()).query, release: () => undefined }),
        end: async () => undefined,
      };
      return {
        db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: own }) }),
        copyOut: async (text) => copyOutOf(await connected())(text),
        release: async () => {
          (await client)?.release();
        },
      };
    },
    withOwnConnection: (work) => work(handle),
    close: async () => {
      await db.destroy();
      await endPools();
    },
  };
  return handle;
}
