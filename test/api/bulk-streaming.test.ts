// The bulk download while it streams (docs/bulk-download.md), over real HTTP on every
// database: an import committing mid-download is wholly absent from it; a client that
// stops reading stops the database read (backpressure), and one that leaves ends it and
// its transaction at once; one download per key at a time (429 with Retry-After), one
// request of the quota, a 304 none.
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  WIDE_CYCLE as CYCLE,
  WIDE_EMPLOYEES as EMPLOYEES,
  WIDE_ORG as ORG,
  wideCycleDataSet,
} from '../fixtures/bulk-data-sets.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { pausedDownload } from '../helpers/paused-download.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const bulkPath = `${employeesPath(CYCLE)}/bulk`;
const dataSet = wideCycleDataSet;

/** A download paused after its first chunk; `finish` reads the rest: the whole body. */
async function startDownload(
  server: TestServer,
  key: string,
  headers: Record<string, string> = {},
) {
  const download = await pausedDownload(`${server.url}${bulkPath}`, {
    'x-api-key': key,
    ...headers,
  });
  return {
    ...download,
    async finish() {
      const read = await download.rest();
      if (!('body' in read)) throw new Error(`the download was cut off: ${read.error}`);
      return read.body;
    },
  };
}

async function metricValue(server: TestServer, name: string): Promise<number> {
  const metric = server.app.metrics.registry.getSingleMetric(name);
  return (await metric?.get())?.values[0]?.value ?? 0;
}

const rowsRead = (server: TestServer) => metricValue(server, 'compplan_bulk_rows_read_total');
const downloadsInProgress = (server: TestServer) => metricValue(server, 'compplan_bulk_downloads');

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the server has stopped reading rows for this download: the count settles. */
async function settledRowsRead(server: TestServer): Promise<number> {
  let last = -1;
  for (;;) {
    const now = await rowsRead(server);
    if (now === last) return now;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/**
 * Whether a transaction still holds an old view of the database: on SQLite a checkpoint
 * that must wait for a reader (after an import wrote to the log); on PostgreSQL a session
 * of the server's database idle in a transaction.
 */
async function snapshotHeld(server: TestServer): Promise<boolean> {
  const config = server.databaseConfig;
  if (config.dialect === 'sqlite') {
    const checker = new SQLite(config.path, { timeout: 0 });
    try {
      const [result] = checker.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return result?.busy === 1;
    } finally {
      checker.close();
    }
  }
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>(
      `select count(*) from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`,
    );
    return Number(rows[0]?.count) > 0;
  } finally {
    await client.end();
  }
}

describe('bulk download while it streams', { timeout: 60_000 }, () => {
  let server: TestServer;
  let key: string;
  let other: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [dataSet('v1')], rateLimitPerSecond: 5 });
    key = await server.createKey(ORG, 'loader');
    other = await server.createKey(ORG, 'another loader');
  }, 120_000);
  afterAll(() => server?.close());

  it('holds back the database read while the client does not read, and serves one snapshot although an import commits meanwhile', async () => {
    const download = await startDownload(server, key);
    const read = await settledRowsRead(server);
    // Backpressure: the server read a few chunks ahead of the paused client, and stopped.
    expect(read).toBeLessThan(EMPLOYEES);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await rowsRead(server)).toBe(read);

    // Every employee changes, in one import that commits while the download waits.
    await server.load(dataSet('v2'));
    expect(await snapshotHeld(server)).toBe(true);
    const body = await download.finish();
    const lines = body.trimEnd().split('\n');
    expect(lines).toHaveLength(EMPLOYEES);
    const versions = new Set(
      lines.map(
        (line) =>
          (JSON.parse(line) as { columns: { version: { value: string } } }).columns.version.value,
      ),
    );
    expect([...versions]).toEqual(['v1']);

    // The next download is wholly of the import.
    const after = await fetch(`${server.url}${bulkPath}`, { headers: { 'x-api-key': key } });
    const newLines = (await after.text()).trimEnd().split('\n');
    expect(newLines).toHaveLength(EMPLOYEES);
    expect(newLines.every((line) => line.includes('"value":"v2"'))).toBe(true);
  });

  it('ends the database read and its transaction, and frees the key, when the client leaves (compressed or not)', async () => {
    // gzip: the stream the client leaves is the compressor's, which the read is piped to.
    const before = await rowsRead(server);
    const download = await startDownload(server, key, { 'accept-encoding': 'gzip' });
    expect(download.response.headers['content-encoding']).toBe('gzip');
    // The read is held back part-way, so that leaving is what ends it.
    expect((await settledRowsRead(server)) - before).toBeLessThan(EMPLOYEES);
    await server.load(dataSet('v3'));
    expect(await snapshotHeld(server)).toBe(true);
    expect(await downloadsInProgress(server)).toBe(1);

    download.request.destroy();
    await until(async () => (await downloadsInProgress(server)) === 0, 'the download to end');
    await until(async () => !(await snapshotHeld(server)), 'the snapshot to be released');
    // The key may download again at once.
    const again = await fetch(`${server.url}${bulkPath}`, { headers: { 'x-api-key': key } });
    expect(again.status).toBe(200);
    expect((await again.text()).trimEnd().split('\n')).toHaveLength(EMPLOYEES);
  });

  it('allows one download per key at a time: a second meanwhile is 429 with Retry-After, another key’s is served', async () => {
    const download = await startDownload(server, key);
    const second = await server.request(bulkPath, { key });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('10');
    expect(await second.json()).toEqual({ message: 'Too Many Requests', statusCode: 429 });

    const otherKeys = await fetch(`${server.url}${bulkPath}`, { headers: { 'x-api-key': other } });
    expect(otherKeys.status).toBe(200);
    await otherKeys.text();

    expect((await download.finish()).trimEnd().split('\n')).toHaveLength(EMPLOYEES);
    await until(async () => (await downloadsInProgress(server)) === 0, 'the download to end');
    const third = await fetch(`${server.url}${bulkPath}`, { headers: { 'x-api-key': key } });
    expect(third.status).toBe(200);
    await third.text();
  });

  it('counts a download as one request of the quota, and a 304 as none', async () => {
    const fresh = await server.createKey(ORG, 'fresh');
    const first = await fetch(`${server.url}${bulkPath}`, { headers: { 'x-api-key': fresh } });
    // The key's first request opens its window of 5.
    expect(first.headers.get('x-ratelimit-remaining')).toBe('4');
    await first.text();
    const etag = first.headers.get('etag') ?? '';
    const notModified = await fetch(`${server.url}${bulkPath}`, {
      headers: { 'x-api-key': fresh, 'if-none-match': etag },
    });
    expect(notModified.status).toBe(304);
    expect(Number(notModified.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(4);
  });
});
