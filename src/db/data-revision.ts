// Whether the imported data may have changed since a moment: what lets the response
// cache (src/http/response-cache.ts) keep an answer and know, on every request, that it
// is still the answer the database would give. Only an import changes the data the API
// shows, and an import commits in one transaction, from this process or another one
// (`compplan import` beside a running server):
//
// - SQLite: `PRAGMA data_version` changes whenever another connection — another process —
//   has committed since the last time this connection asked. Asking starts a read
//   transaction (3 µs alone, 10–20 µs in a busy server: more than the rest of a cached
//   answer's lookup), so it is asked at most once a millisecond: an import is seen by
//   every request that arrives a millisecond after its commit, long before the
//   `compplan import` that made it has even exited. An import through this process's
//   own connection says so itself (`changed()`), at once.
// - PostgreSQL: an import's transaction sends a notification on the channel below, which
//   PostgreSQL delivers to every listener when, and only if, it commits. The server keeps
//   one connection listening. While that connection is down, notifications would be lost,
//   so the revision is unknown (nothing is cached or reused) until it is back, and
//   reconnecting counts as a change.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { PostgresBounds } from '../config.js';
import type { Database } from './types.js';

export interface DataRevision {
  /**
   * A number that changes whenever imported data may have changed, read before an
   * answer is built from the database; undefined while that cannot be known, when no
   * answer may be kept or reused.
   */
  current(): number | undefined;
  /**
   * Called in an import's transaction, for servers on other connections: on PostgreSQL
   * they are notified when, and only if, it commits.
   */
  announce(trx: Kysely<Database>): Promise<void>;
  /** An import through this very handle committed. */
  changed(): void;
  /** Starts watching for imports by other processes (PostgreSQL: connects and listens). */
  watch(onError: (error: Error) => void): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL = 'compplan_data_changed';

// After the listening connection is lost, how long before trying again; meanwhile no
// answer is cached or reused, so the API is only slower.
const RELISTEN_DELAY_MS = 1_000;

// How long one reading of SQLite's data_version answers for (see the top of this file).
const SQLITE_CHECK_INTERVAL_MS = 1;

export function sqliteRevision(sqlite: SQLite.Database): DataRevision {
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  let lastVersion: unknown;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let revision = 0;
  return {
    current() {
      const now = performance.now();
      if (now - checkedAt < SQLITE_CHECK_INTERVAL_MS) return revision;
      checkedAt = now;
      const version = dataVersion.get();
      if (version !== lastVersion) {
        lastVersion = version;
        revision++;
      }
      return revision;
    },
    async announce() {},
    changed() {
      revision++;
    },
    async watch() {},
    async close() {},
  };
}

/** `bounds`: connecting and the answer to LISTEN (src/db/timeouts.ts). */
export function postgresRevision(
  url: string,
  bounds: Pick<PostgresBounds, 'connectMs' | 'queryMs' | 'keepAliveMs'>,
): DataRevision {
  // Names this handle in its notices: its own imports have said so already (`changed()`),
  // and hearing them again would only throw away the answers kept since.
  const self = randomUUID();
  let revision = 0;
  let listener: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let reported = false;
  let report: (error: Error) => void = () => undefined;

  const lost = (client: pg.Client, error?: Error) => {
    if (listener !== client) return;
    listener = undefined;
    listening = false;
    client.end().catch(() => undefined);
    if (closed) return;
    // Once per outage, not at every failed attempt to listen again.
    if (!reported) report(error ?? new Error('the connection listening for imports ended'));
    reported = true;
    retry = setTimeout(() => {
      retry = undefined;
      void listen();
    }, RELISTEN_DELAY_MS).unref();
  };

  async function listen(): Promise<void> {
    // Required here, as in connect.ts: SQLite processes never load the driver.
    const { Client } = createRequire(import.meta.url)('pg') as typeof pg;
    const client = new Client({
      connectionString: url,
      connectionTimeoutMillis: bounds.connectMs,
      query_timeout: bounds.queryMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: bounds.keepAliveMs,
      application_name: 'compplan listener',
    });
    listener = client;
    client.on('notification', (notice) => {
      if (notice.payload !== self) revision++;
    });
    client.on('error', (error) => lost(client, error));
    client.on('end', () => lost(client));
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
    } catch (error) {
      lost(client, error as Error);
      return;
    }
    if (listener !== client) return;
    // Whatever was committed while nobody listened is unknown: count it as a change.
    revision++;
    listening = true;
    reported = false;
  }

  return {
    current: () => (listening ? revision : undefined),
    async announce(trx) {
      await sql`select pg_notify(${CHANNEL}, ${self})`.execute(trx);
    },
    changed() {
      revision++;
    },
    async watch(onError) {
      report = onError;
      if (!closed && !listener && !retry) await listen();
    },
    async close() {
      closed = true;
      listening = false;
      clearTimeout(retry);
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}
