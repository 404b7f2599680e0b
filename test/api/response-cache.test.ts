// The response cache (docs/api-behaviour.md, "Caching"; src/http/response-cache.ts): a
// 200 answer of the data routes is kept and sent again, byte for byte, until an import
// commits — from this process, from a `compplan import` beside the server, or (on
// PostgreSQL) while the server was not listening for imports. Each case reads the
// cache's own counter, so that a hit is known to be a hit and not a rebuilt answer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { importDataSet } from '../../src/import/load.js';
import { ACME, acmeDataSet, CYCLE, GLOBEX, globexDataSet } from '../fixtures/data-sets.js';
import { type RawResponse, rawRequest } from '../helpers/api-expectations.js';
import { runCli } from '../helpers/cli.js';
import { testDialect } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const LIST = '/v1/compensationPlanning/meritCycles';
const CACHED_ROUTES = [
  LIST,
  `${LIST}?limit=1`,
  `${LIST}/${CYCLE.annual2025}`,
  `${LIST}/${CYCLE.annual2025}/exchangeRates`,
  `${LIST}/${CYCLE.annual2025}/employees?limit=2`,
];
// Headers that differ between any two answers, cached or not: the quota's count among them.
const perRequest = (name: string) =>
  name === 'date' ||
  name === 'x-request-id' ||
  name.startsWith('x-ratelimit-') ||
  name === 'ratelimit';

type Result = 'hit' | 'miss' | 'off';

async function counts(server: TestServer): Promise<Record<Result, number>> {
  const { values } = await server.app.metrics.responseCache.get();
  const of = (result: Result) => values.find((v) => v.labels.result === result)?.value ?? 0;
  return { hit: of('hit'), miss: of('miss'), off: of('off') };
}

/** What one GET did to the cache's counter: exactly one of hit, miss, off. */
async function countedAs(server: TestServer, read: () => Promise<unknown>): Promise<Result> {
  const before = await counts(server);
  await read();
  const after = await counts(server);
  const changed = (['hit', 'miss', 'off'] as const).filter((r) => after[r] !== before[r]);
  if (changed.length !== 1) throw new Error(`counter moved for ${changed.join(', ') || 'none'}`);
  return changed[0] as Result;
}

const withoutPerRequest = (headers: Headers) =>
  Object.fromEntries([...headers].filter(([name]) => !perRequest(name)));

const renamed = (name: string) => {
  const dataSet = acmeDataSet();
  const [first] = dataSet.meritCycles;
  if (first) first.name = name;
  return dataSet;
};

describe('response cache', () => {
  let server: TestServer;
  let key: string;
  let globexKey: string;
  const get = (path: string, headers: Record<string, string> = {}) =>
    server.request(path, { key, headers });
  const cycleName = async () =>
    ((await (await get(`${LIST}/${CYCLE.annual2025}`)).json()) as { name: string }).name;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), globexDataSet()] });
    key = await server.createKey(ACME);
    globexKey = await server.createKey(GLOBEX);
  });
  afterAll(() => server.close());

  it.each(CACHED_ROUTES)(
    'GET %s: the second answer is the kept one, with the same bytes and headers',
    async (path) => {
      await server.load(acmeDataSet()); // a fresh revision: the first read builds
      let first: Response | undefined;
      let second: Response | undefined;
      expect(
        await countedAs(server, async () => {
          first = await get(path);
        }),
      ).toBe('miss');
      expect(
        await countedAs(server, async () => {
          second = await get(path);
        }),
      ).toBe('hit');
      if (!first || !second) throw new Error('no answers');
      expect(second.status).toBe(200);
      expect(await second.text()).toBe(await first.text());
      expect(withoutPerRequest(second.headers)).toEqual(withoutPerRequest(first.headers));
      expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    },
  );

  it('a kept answer is compressed for a client that asks, and decompresses to the same JSON', async () => {
    const path = `${LIST}/${CYCLE.annual2025}/employees?limit=3`;
    const plain = await (await get(path)).text();
    let compressed: Response | undefined;
    expect(
      await countedAs(server, async () => {
        compressed = await fetch(`${server.url}${path}`, {
          headers: { 'x-api-key': key, 'accept-encoding': 'gzip' },
        });
      }),
    ).toBe('hit');
    expect(compressed?.headers.get('content-encoding')).toBe('gzip');
    expect(await compressed?.text()).toBe(plain); // fetch undoes the gzip
  });

  describe('a kept answer, for a client that asks for compression', () => {
    const path = `${LIST}/${CYCLE.annual2025}/employees?limit=4`;
    const rawGet = (headers: Record<string, string> = {}) =>
      rawRequest(server.url, path, { headers: { 'x-api-key': key, ...headers } });
    const stable = (headers: IncomingHttpHeaders) =>
      Object.fromEntries(Object.entries(headers).filter(([name]) => !perRequest(name)));
    const decoded: Record<string, (body: Buffer) => Buffer> = {
      br: brotliDecompressSync,
      gzip: gunzipSync,
      deflate: inflateSync,
    };

    it.each([
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['deflate', 'deflate'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0.1, gzip', 'gzip'],
      ['*', 'gzip'],
      ['x-gzip', 'gzip'],
    ])(
      'Accept-Encoding: %s → sent kept as %s, in the very bytes and headers of the answer built for it',
      async (acceptEncoding, encoding) => {
        await server.load(acmeDataSet()); // a fresh revision: the first read builds
        let built: RawResponse | undefined;
        let kept: RawResponse | undefined;
        expect(
          await countedAs(server, async () => {
            built = await rawGet({ 'accept-encoding': acceptEncoding });
          }),
        ).toBe('miss');
        expect(
          await countedAs(server, async () => {
            kept = await rawGet({ 'accept-encoding': acceptEncoding });
          }),
        ).toBe('hit');
        if (!built || !kept) throw new Error('no answers');
        const plain = await rawGet();
        expect(kept.status).toBe(200);
        expect(kept.headers['content-encoding']).toBe(encoding);
        expect(kept.headers.vary).toBe('accept-encoding');
        expect(kept.body.equals(built.body)).toBe(true);
        expect(stable(kept.headers)).toEqual(stable(built.headers));
        expect(kept.headers['content-length']).toBe(String(kept.body.length));
        expect(decoded[encoding]?.(kept.body).equals(plain.body)).toBe(true);
      },
    );

    it('carries the ETag of the plain answer; If-None-Match with it: 304 without a body or Content-Encoding', async () => {
      const plain = await rawGet();
      const gzip = await rawGet({ 'accept-encoding': 'gzip' });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gzip.headers.etag).toBe(plain.headers.etag);
      let notModified: RawResponse | undefined;
      expect(
        await countedAs(server, async () => {
          notModified = await rawGet({
            'accept-encoding': 'gzip',
            'if-none-match': plain.headers.etag ?? '',
          });
        }),
      ).toBe('hit');
      expect(notModified?.status).toBe(304);
      expect(notModified?.body.length).toBe(0);
      expect(notModified?.headers['content-encoding']).toBeUndefined();
      expect(notModified?.headers.etag).toBe(plain.headers.etag);
    });

    it.each([
      ['x-no-compression', { 'accept-encoding': 'gzip', 'x-no-compression': '1' }],
      ['identity', { 'accept-encoding': 'identity' }],
      ['an unknown encoding', { 'accept-encoding': 'compress' }],
    ])('%s: sent kept, as it is', async (_, headers) => {
      const plain = await rawGet();
      let kept: RawResponse | undefined;
      expect(
        await countedAs(server, async () => {
          kept = await rawGet(headers);
        }),
      ).toBe('hit');
      expect(kept?.headers['content-encoding']).toBeUndefined();
      expect(kept?.body.equals(plain.body)).toBe(true);
    });

    it('an answer under 1 KiB: sent kept as it is, as it was built', async () => {
      const small = `${LIST}/${CYCLE.annual2025}`;
      const gzipGet = () =>
        rawRequest(server.url, small, { headers: { 'x-api-key': key, 'accept-encoding': 'gzip' } });
      const built = await gzipGet();
      let kept: RawResponse | undefined;
      expect(
        await countedAs(server, async () => {
          kept = await gzipGet();
        }),
      ).toBe('hit');
      expect(built.body.length).toBeLessThan(1_024);
      expect(built.headers['content-encoding']).toBeUndefined();
      expect(kept?.headers['content-encoding']).toBeUndefined();
      expect(kept?.body.equals(built.body)).toBe(true);
    });
  });

  it('compplan_response_cache_bytes counts a kept answer, and then its compressed form too', async () => {
    const held = async () => {
      const metric = server.app.metrics.registry.getSingleMetric('compplan_response_cache_bytes');
      return (await metric?.get())?.values[0]?.value ?? Number.NaN;
    };
    await server.load(acmeDataSet()); // a fresh revision: nothing kept is current
    const path = `${LIST}/${CYCLE.annual2025}/employees?limit=5`;
    const before = await held();
    const plain = await rawRequest(server.url, path, { headers: { 'x-api-key': key } });
    const kept = await held();
    expect(kept - before).toBeGreaterThanOrEqual(plain.body.length);
    const gzip = await rawRequest(server.url, path, {
      headers: { 'x-api-key': key, 'accept-encoding': 'gzip' },
    });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect((await held()) - kept).toBe(gzip.body.length);
  });

  it('a kept answer still counts against the quota and carries its own ratelimit header', async () => {
    const path = `${LIST}/${CYCLE.annual2025}`;
    await get(path);
    const remaining = async () =>
      /r=(\d+)/.exec((await get(path)).headers.get('ratelimit') ?? '')?.[1];
    const [a, b] = [await remaining(), await remaining()];
    expect(Number(b)).toBeLessThan(Number(a));
  });

  it('If-None-Match with the ETag of a kept answer: 304 without a body', async () => {
    const path = `${LIST}/${CYCLE.annual2025}/employees?limit=2`;
    const etag = (await get(path)).headers.get('etag') ?? '';
    let answer: Response | undefined;
    expect(
      await countedAs(server, async () => {
        answer = await fetch(`${server.url}${path}`, {
          headers: { 'x-api-key': key, 'if-none-match': etag },
        });
      }),
    ).toBe('hit');
    expect(answer?.status).toBe(304);
    expect(await answer?.text()).toBe('');
  });

  it("one organisation never gets another's kept answer for the same URL", async () => {
    await get(LIST);
    expect(await countedAs(server, () => get(LIST))).toBe('hit');
    const globex = (await (await server.request(LIST, { key: globexKey })).json()) as {
      data: { id: string }[];
    };
    expect(globex.data.map((cycle) => cycle.id)).toEqual([CYCLE.globex]);
  });

  it('errors are not kept: a second 404 is built again', async () => {
    const missing = `${LIST}/mc_99999999-0000-4000-8000-000000000000`;
    expect((await get(missing)).status).toBe(404);
    expect(await countedAs(server, () => get(missing))).toBe('miss');
  });

  it('an import in this process: the next request gets the new data', async () => {
    await server.load(renamed('Before'));
    expect(await cycleName()).toBe('Before');
    expect(await cycleName()).toBe('Before'); // kept
    await server.load(renamed('After'));
    expect(await countedAs(server, async () => expect(await cycleName()).toBe('After'))).toBe(
      'miss',
    );
  });

  it('`compplan import` in another process while the server runs: the next request gets the new data', async () => {
    await server.load(renamed('Before'));
    expect(await cycleName()).toBe('Before');
    expect(await countedAs(server, async () => expect(await cycleName()).toBe('Before'))).toBe(
      'hit',
    );
    const dir = mkdtempSync(join(tmpdir(), 'compplan-cache-'));
    try {
      const file = join(dir, 'acme.json');
      writeFileSync(file, JSON.stringify(renamed('After, from the command line')));
      const result = await runCli(['import', file], {
        env: { DATABASE_URL: server.databaseUrl },
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await cycleName()).toBe('After, from the command line');
  });

  it('an import through another connection (no word from this process) is seen as well', async () => {
    await server.load(renamed('Before'));
    expect(await cycleName()).toBe('Before');
    const other = openDatabase(server.databaseConfig);
    try {
      await importDataSet(other, renamed('After, through another connection'));
    } finally {
      await other.close();
    }
    // SQLite's check answers for a millisecond; PostgreSQL's notice arrives moments after
    // the commit.
    await expect
      .poll(cycleName, { interval: 5, timeout: 2_000 })
      .toBe('After, through another connection');
  });

  // PostgreSQL only (the SQLite project does not define it): SQLite has no such connection.
  if (testDialect() === 'postgres')
    it('PostgreSQL: while the server is not listening for imports nothing is kept or reused, and an import made meanwhile is seen once it listens again', async () => {
      await server.load(renamed('Before'));
      expect(await cycleName()).toBe('Before');
      expect(await countedAs(server, cycleName)).toBe('hit');

      const admin = openDatabase(server.databaseConfig);
      try {
        // Ends the server's listening connection, as a PostgreSQL restart or a cut would.
        await sql`select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = 'compplan listener' and datname = current_database()`.execute(
          admin.db,
        );
        await expect.poll(() => countedAs(server, cycleName), { interval: 5 }).toBe('off');
        // An import the server hears nothing of: its notice goes to nobody.
        await importDataSet(admin, renamed('After, while not listening'));
      } finally {
        await admin.close();
      }
      // Listening again about a second later; the answer kept before is not reused.
      await expect.poll(() => countedAs(server, cycleName), { timeout: 10_000 }).toBe('miss');
      expect(await cycleName()).toBe('After, while not listening');
      expect(
        server.logs.some((line) => String(line.msg).startsWith('answers are not cached')),
      ).toBe(true);
    });
});
