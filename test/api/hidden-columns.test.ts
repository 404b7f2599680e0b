// Hidden columns (docs/api-keys.md): a key made with `--hide-columns` reads every
// employee without those column keys — every page, HEAD, compressed and cached answers,
// and `compplan export` — and each employee is otherwise exactly what a full key reads,
// byte for byte, whatever its column keys (`__proto__`, dots, quotes) and values. A full
// key and a hidden-column key reading the same URL in turn never get each other's kept
// answer. Runs on every database.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EDGE_CYCLE, PROTO_CYCLE, UMBRELLA, umbrellaDataSet } from '../fixtures/api-data-sets.js';
import { employeesPath, MERIT_CYCLES } from '../helpers/api-expectations.js';
import { runCli } from '../helpers/cli.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Keys of the edge employees' columns that are hard to cut out of a JSON text by hand, one
// present in every employee, and one in none.
const HIDDEN = ['__proto__', 'quoting', 'a.b[0]', 'constructor', 'department', 'salary'];
const PAGE_SIZES = [1, 4, 100];

type Employee = { columns: Record<string, unknown> };

/** The `data` array of a page exactly as served: the bytes between `{"data":` and `,"nextCursor"`. */
function dataText(body: string): string {
  expect(body.startsWith('{"data":')).toBe(true);
  return body.slice('{"data":'.length, body.lastIndexOf(',"nextCursor":'));
}

/** What a hidden-column key must be served for a full key's page: the columns taken out. */
function withoutHidden(fullBody: string): string {
  const data = (JSON.parse(fullBody) as { data: Employee[] }).data;
  for (const employee of data) {
    for (const key of HIDDEN) {
      if (Object.hasOwn(employee.columns, key)) delete employee.columns[key];
    }
  }
  return JSON.stringify(data);
}

async function responseCacheCount(server: TestServer, result: 'hit' | 'miss') {
  const { values } = await server.app.metrics.responseCache.get();
  return values.find((v) => v.labels.result === result)?.value ?? 0;
}

describe('hidden columns', () => {
  let server: TestServer;
  let full: string;
  let hiding: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [umbrellaDataSet()] });
    full = await server.createKey(UMBRELLA, 'full');
    hiding = await server.createKey(UMBRELLA, 'no pay', { hiddenColumns: HIDDEN });
  });
  afterAll(() => server?.close());

  /** Every page of a cycle's employees, as texts, for a key. */
  async function pagesOf(key: string, cycle: string, limit: number): Promise<string[]> {
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : '';
      const response = await server.request(`${employeesPath(cycle)}?limit=${limit}${query}`, {
        key,
      });
      expect(response.status).toBe(200);
      const body = await response.text();
      pages.push(body);
      cursor = (JSON.parse(body) as { nextCursor: string | null }).nextCursor;
    } while (cursor);
    return pages;
  }

  it.each(PAGE_SIZES)(
    'every page (limit %i): each employee exactly as a full key reads it, without the hidden columns',
    async (limit) => {
      for (const cycle of [EDGE_CYCLE, PROTO_CYCLE]) {
        const fullPages = await pagesOf(full, cycle, limit);
        const hiddenPages = await pagesOf(hiding, cycle, limit);
        expect(hiddenPages).toHaveLength(fullPages.length);
        fullPages.forEach((fullPage, index) => {
          const served = dataText(hiddenPages[index] ?? '');
          expect(served).toBe(withoutHidden(fullPage));
          for (const key of HIDDEN) expect(served).not.toContain(`"${key}":{"name"`);
        });
      }
    },
  );

  it('the columns really were there for the full key (the test hides something)', async () => {
    const page = [
      ...(await pagesOf(full, EDGE_CYCLE, 100)),
      ...(await pagesOf(full, PROTO_CYCLE, 100)),
    ].join('\n');
    for (const key of ['__proto__', 'quoting', 'a.b[0]', 'constructor', 'department']) {
      expect(page).toContain(`"${JSON.stringify(key).slice(1, -1)}":{"name"`);
    }
  });

  it('a full key and a hidden-column key reading the same URL in turn each get their own answer, kept for each', async () => {
    const url = `${employeesPath(EDGE_CYCLE)}?limit=100`;
    const expectedFull = await (await server.request(url, { key: full })).text();
    const expectedHidden = await (await server.request(url, { key: hiding })).text();
    expect(dataText(expectedHidden)).toBe(withoutHidden(expectedFull));
    const hitsBefore = await responseCacheCount(server, 'hit');
    for (let round = 0; round < 3; round++) {
      for (const [key, expected] of [
        [full, expectedFull],
        [hiding, expectedHidden],
      ] as const) {
        const response = await server.request(url, { key });
        expect(await response.text()).toBe(expected);
      }
    }
    expect((await responseCacheCount(server, 'hit')) - hitsBefore).toBe(6);
  });

  it('HEAD, gzip and If-None-Match: no hidden column anywhere, and the ETag differs from a full key’s', async () => {
    const url = `${employeesPath(EDGE_CYCLE)}?limit=100`;
    const plainFull = await server.request(url, { key: full });
    const plainHidden = await server.request(url, { key: hiding });
    const hiddenBody = await plainHidden.text();
    const fullTag = plainFull.headers.get('etag');
    const hiddenTag = plainHidden.headers.get('etag');
    expect(hiddenTag).toMatch(/^W\/"/);
    expect(hiddenTag).not.toBe(fullTag);

    const gzipped = await nodeRequest(server.url, url, {
      headers: { 'x-api-key': hiding, 'accept-encoding': 'gzip' },
    });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.rawBody).toString('utf8')).toBe(hiddenBody);
    expect(gzipped.headers.etag).toBe(hiddenTag);

    const head = await server.request(url, { key: hiding, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(hiddenTag);

    // A full key's tag is no match for the hidden-column answer, and the other way round.
    const withFullTag = await server.request(url, {
      key: hiding,
      headers: { 'if-none-match': fullTag ?? '' },
    });
    expect(withFullTag.status).toBe(200);
    expect(await withFullTag.text()).toBe(hiddenBody);
    const withOwnTag = await server.request(url, {
      key: hiding,
      headers: { 'if-none-match': hiddenTag ?? '' },
    });
    expect(withOwnTag.status).toBe(304);
  });

  it('merit cycles read the same as for a full key (hidden columns are employee columns)', async () => {
    const cycle = `${MERIT_CYCLES}/${EDGE_CYCLE}`;
    for (const path of [cycle, `${cycle}/exchangeRates`]) {
      const a = await (await server.request(path, { key: full })).text();
      const b = await (await server.request(path, { key: hiding })).text();
      expect(b).toBe(a);
    }
  });

  it('compplan export with a hidden-column key writes no hidden column (NDJSON and CSV)', async () => {
    const exported = async (format: string) => {
      const result = await runCli(
        [
          'export',
          'employees',
          '--cycle',
          EDGE_CYCLE,
          '--format',
          format,
          '--base-url',
          server.url,
        ],
        { env: { COMPPLAN_API_KEY: hiding, COMPPLAN_BASE_URL: undefined }, timeoutMs: 30_000 },
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      return result.stdout;
    };
    const ndjson = (await exported('ndjson')).trimEnd().split('\n');
    const fullPage = await (
      await server.request(`${employeesPath(EDGE_CYCLE)}?limit=100`, { key: full })
    ).text();
    expect(`[${ndjson.join(',')}]`).toBe(withoutHidden(fullPage));

    const [header = ''] = (await exported('csv')).replace(/^\uFEFF/, '').split('\r\n');
    expect(header).toContain('columns.employee');
    for (const key of HIDDEN) expect(header.split(',')).not.toContain(`columns.${key}`);
    expect(header).not.toContain('department');
    expect(header).not.toContain('quoting');
  });
});
