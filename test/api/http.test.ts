// HTTP behaviour shared by every endpoint (docs/api-behaviour.md): 404 and 405 bodies,
// HEAD, compression, x-request-id, content type, timestamps, a real 500 and malformed URLs.
// Raw node:http requests are used where fetch would hide something (encodings, HEAD).
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE, LARGE_CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import {
  cyclePath,
  employeesPath,
  errorBody,
  ISO_UTC_MS,
  JSON_TYPE,
  MERIT_CYCLES,
  type Page,
  type RawResponse,
  ratesPath,
  rawRequest,
} from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REQUEST_ID_SHAPE = /^[\w.:-]{1,128}$/;
const UNSAFE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
// Headers that differ between any two responses (time, id, the key's remaining quota).
const VOLATILE = [
  'date',
  'x-request-id',
  'ratelimit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];
const LARGE_PAGE = `${employeesPath(LARGE_CYCLE)}?limit=100`;

const GET_ENDPOINTS = [
  '/ping',
  MERIT_CYCLES,
  `${MERIT_CYCLES}?status=active&startDate[gte]=2025-01-01&limit=1`,
  cyclePath(CYCLE.annual2025),
  ratesPath(CYCLE.annual2025),
  employeesPath(CYCLE.annual2025),
  LARGE_PAGE,
];
const KNOWN_PATHS = [
  '/ping',
  MERIT_CYCLES,
  cyclePath(CYCLE.annual2025),
  ratesPath(CYCLE.annual2025),
  employeesPath(CYCLE.annual2025),
];

function stableHeaders(headers: RawResponse['headers']) {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !VOLATILE.includes(name)));
}

describe('HTTP behaviour', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), largeCycleDataSet(257)] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  const raw = (path: string, options: { method?: string; headers?: Record<string, string> } = {}) =>
    rawRequest(server.url, path, {
      method: options.method ?? 'GET',
      headers: { 'x-api-key': key, ...options.headers },
    });
  const json = (response: RawResponse): unknown => JSON.parse(response.body.toString('utf8'));

  describe('unknown paths', () => {
    it.each([
      '/nope',
      '/',
      '/v1',
      '/PING',
      '/v2/compensationPlanning/meritCycles',
      '/V1/compensationPlanning/meritCycles',
      `${cyclePath(CYCLE.annual2025)}/foo`,
      `${employeesPath(CYCLE.annual2025)}/${'x'}`,
      `${employeesPath(CYCLE.annual2025)}/`,
    ])('GET %s → 404 with the standard error body', async (path) => {
      const response = await raw(path);
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(json(response)).toEqual(errorBody(path, `Route GET ${path} not found`, 404));
    });

    it('keeps the query string out of the error body’s path', async () => {
      const response = await raw('/nope?limit=1&x=y');
      expect(json(response)).toEqual(errorBody('/nope', 'Route GET /nope not found', 404));
    });

    it('answers 404 (not 405) to other methods on an unknown path', async () => {
      const response = await raw('/nope', { method: 'POST' });
      expect(response.status).toBe(404);
      expect(json(response)).toEqual(errorBody('/nope', 'Route POST /nope not found', 404));
    });
  });

  describe('methods other than GET and HEAD', () => {
    const cases = KNOWN_PATHS.flatMap((path) =>
      UNSAFE_METHODS.map((method) => [method, path] as const),
    );

    it.each(cases)(
      '%s %s → 405 with Allow: GET, HEAD and the standard body',
      async (method, path) => {
        const response = await raw(path, { method });
        expect(response.status).toBe(405);
        expect(response.headers.allow).toBe('GET, HEAD');
        expect(response.headers['content-type']).toBe(JSON_TYPE);
        expect(json(response)).toEqual(
          errorBody(
            path,
            `Method ${method} is not allowed: this API is read-only (GET, HEAD)`,
            405,
          ),
        );
      },
    );

    it('answers 405 to a POST with a JSON body, and changes nothing', async () => {
      const before = json(await raw(cyclePath(CYCLE.annual2025)));
      const response = await rawRequest(server.url, cyclePath(CYCLE.annual2025), {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Renamed', status: 'finalized' }),
      });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('GET, HEAD');
      expect(json(await raw(cyclePath(CYCLE.annual2025)))).toEqual(before);
    });

    it.each([
      ['an empty JSON body', 'application/json', ''],
      ['an invalid JSON body', 'application/json', '{not json'],
      ['an XML body', 'application/xml', '<cycle/>'],
      ['a form body', 'application/x-www-form-urlencoded', 'name=Renamed'],
      [
        'a body over the size limit',
        'application/json',
        JSON.stringify({ x: 'a'.repeat(1_100_000) }),
      ],
    ])('answers 405 (not 400/413/415) to PUT and DELETE with %s', async (_, contentType, body) => {
      for (const method of ['PUT', 'DELETE']) {
        const response = await rawRequest(server.url, MERIT_CYCLES, {
          method,
          headers: { 'x-api-key': key, 'content-type': contentType },
          body,
        });
        expect({ status: response.status, allow: response.headers.allow }, method).toEqual({
          status: 405,
          allow: 'GET, HEAD',
        });
        expect(json(response)).toEqual(
          errorBody(
            MERIT_CYCLES,
            `Method ${method} is not allowed: this API is read-only (GET, HEAD)`,
            405,
          ),
        );
      }
    });
  });

  describe('HEAD', () => {
    it.each(GET_ENDPOINTS)('HEAD %s → 200, the headers of GET, no body', async (path) => {
      const get = await raw(path);
      const head = await raw(path, { method: 'HEAD' });
      expect(get.status).toBe(200);
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect(stableHeaders(head.headers)).toEqual(stableHeaders(get.headers));
      expect(head.headers['content-length']).toBe(String(get.body.length));
    });

    it('HEAD negotiates content-encoding as GET does (same Content-Encoding and Vary)', async () => {
      const headers = { 'accept-encoding': 'gzip' };
      const get = await raw(LARGE_PAGE, { headers });
      const head = await raw(LARGE_PAGE, { method: 'HEAD', headers });
      expect(get.headers['content-encoding']).toBe('gzip');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect({
        'content-encoding': head.headers['content-encoding'],
        vary: head.headers.vary,
      }).toEqual({ 'content-encoding': get.headers['content-encoding'], vary: get.headers.vary });
    });
  });

  describe('compression', () => {
    let plain: RawResponse;

    beforeAll(async () => {
      plain = await raw(LARGE_PAGE);
    });

    it('sends a large response uncompressed when accept-encoding is absent', async () => {
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers['content-type']).toBe(JSON_TYPE);
      expect(plain.body.length).toBeGreaterThan(20_000);
      expect(plain.headers['content-length']).toBe(String(plain.body.length));
      const page = json(plain) as Page<{ id: string }>;
      expect(page.data.length).toBe(100);
    });

    it('sends it uncompressed for accept-encoding: identity', async () => {
      const response = await raw(LARGE_PAGE, { headers: { 'accept-encoding': 'identity' } });
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.body.toString('utf8')).toBe(plain.body.toString('utf8'));
    });

    it('gzips it for accept-encoding: gzip; it decompresses to the same JSON', async () => {
      const response = await raw(LARGE_PAGE, { headers: { 'accept-encoding': 'gzip' } });
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe('gzip');
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(response.body.length).toBeLessThan(plain.body.length / 4);
      expect(gunzipSync(response.body).toString('utf8')).toBe(plain.body.toString('utf8'));
    });

    it('brotli-compresses it for accept-encoding: br; it decompresses to the same JSON', async () => {
      const response = await raw(LARGE_PAGE, { headers: { 'accept-encoding': 'br' } });
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe('br');
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(response.body.length).toBeLessThan(plain.body.length / 4);
      expect(brotliDecompressSync(response.body).toString('utf8')).toBe(
        plain.body.toString('utf8'),
      );
    });

    it.each([
      ['deflate;q=0, gzip;q=0, br;q=0, *;q=0.5', undefined],
      ['gzip;q=0', undefined],
      ['*;q=0', undefined],
      ['gzip;q=0, br', 'br'],
      ['br;q=0, *', 'gzip'],
      ['gzip, *;q=0', 'gzip'],
    ])(
      'reads q-values as RFC 9110 does (q=0: not acceptable): %s → %s',
      async (header, encoding) => {
        const response = await raw(LARGE_PAGE, { headers: { 'accept-encoding': header } });
        expect(response.status).toBe(200);
        expect(response.headers['content-encoding']).toBe(encoding);
        const decode = { br: brotliDecompressSync, gzip: gunzipSync }[encoding ?? ''];
        const text = (decode ? decode(response.body) : response.body).toString('utf8');
        expect(text).toBe(plain.body.toString('utf8'));
      },
    );

    it('compresses the merit cycle list too, when asked', async () => {
      const identity = await raw(`${MERIT_CYCLES}?limit=100`);
      const gzip = await raw(`${MERIT_CYCLES}?limit=100`, {
        headers: { 'accept-encoding': 'gzip' },
      });
      expect(identity.body.length).toBeGreaterThan(1_024);
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzip.body).toString('utf8')).toBe(identity.body.toString('utf8'));
    });
  });

  describe('x-request-id, content type and timestamps on every kind of response', () => {
    const kinds: [string, string, { method?: string; headers?: Record<string, string> }, number][] =
      [
        ['200 ping', '/ping', {}, 200],
        ['200 list', MERIT_CYCLES, {}, 200],
        ['200 employees', employeesPath(CYCLE.annual2025), {}, 200],
        ['200 gzip', LARGE_PAGE, { headers: { 'accept-encoding': 'gzip' } }, 200],
        ['200 HEAD', cyclePath(CYCLE.annual2025), { method: 'HEAD' }, 200],
        ['401', '/ping', { headers: { 'x-api-key': '' } }, 401],
        ['404 unknown path', '/nope', {}, 404],
        ['404 unknown cycle', cyclePath('mc_00000000-0000-4000-8000-000000000000'), {}, 404],
        ['405', MERIT_CYCLES, { method: 'DELETE' }, 405],
        ['422', `${MERIT_CYCLES}?limit=0`, {}, 422],
        ['400 cursor', `${MERIT_CYCLES}?nextCursor=abc`, {}, 400],
        ['400 malformed URL', `${MERIT_CYCLES}/%E0%A4%A`, {}, 400],
      ];

    it.each(kinds)('%s carries an x-request-id', async (_, path, options, status) => {
      const response = await raw(path, options);
      expect(response.status).toBe(status);
      expect(response.headers['x-request-id']).toMatch(REQUEST_ID_SHAPE);
    });

    it.each(kinds)(
      '%s has content-type application/json; charset=utf-8',
      async (_, path, options, status) => {
        const response = await raw(path, options);
        expect(response.status).toBe(status);
        expect(response.headers['content-type']).toBe(JSON_TYPE);
      },
    );

    it.each(kinds.filter(([, , options, status]) => status >= 400 && !options.method))(
      '%s has a UTC timestamp with milliseconds, of now',
      async (_, path, options) => {
        const before = Date.now();
        const response = await raw(path, options);
        const after = Date.now();
        const body = json(response) as { timestamp: string };
        expect(body.timestamp).toMatch(ISO_UTC_MS);
        const at = Date.parse(body.timestamp);
        expect(at).toBeGreaterThanOrEqual(before - 1_000);
        expect(at).toBeLessThanOrEqual(after + 1_000);
      },
    );

    it('gives every request its own generated id', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const id = (await raw('/ping')).headers['x-request-id'];
        expect(id).toMatch(REQUEST_ID_SHAPE);
        ids.add(String(id));
      }
      expect(ids.size).toBe(5);
    });

    it.each(['abc-123', 'trace.id:42_x', '0f8fad5b-d9cb-469f-a165-70867728950e', 'a'.repeat(128)])(
      'echoes a valid incoming x-request-id %j (on 200, 404 and 422)',
      async (id) => {
        for (const path of ['/ping', '/nope', `${MERIT_CYCLES}?limit=0`]) {
          const response = await raw(path, { headers: { 'x-request-id': id } });
          expect(response.headers['x-request-id'], path).toBe(id);
        }
      },
    );

    it.each(['has spaces in it', 'x'.repeat(300), 'semi;colon', 'quote"d', '<script>'])(
      'replaces an invalid incoming x-request-id %j with a fresh one',
      async (id) => {
        const response = await raw('/ping', { headers: { 'x-request-id': id } });
        expect(response.status).toBe(200);
        const given = response.headers['x-request-id'];
        expect(given).not.toBe(id);
        expect(given).toMatch(REQUEST_ID_SHAPE);
      },
    );

    it('serves every merit cycle timestamp in UTC with milliseconds', async () => {
      const page = json(await raw(`${MERIT_CYCLES}?limit=100`)) as Page<Record<string, string>>;
      expect(page.data.length).toBe(7);
      for (const cycle of page.data) {
        for (const field of ['startDate', 'endDate', 'createdDate']) {
          expect(cycle[field], `${cycle.id} ${field}`).toMatch(ISO_UTC_MS);
        }
      }
      // Loaded as 2025-01-01T18:00:00-08:00.
      expect(page.data.find((cycle) => cycle.id === CYCLE.offset)?.startDate).toBe(
        '2025-01-02T02:00:00.000Z',
      );
      const one = json(await raw(cyclePath(CYCLE.offset))) as Record<string, string>;
      expect(one.startDate).toBe('2025-01-02T02:00:00.000Z');
    });
  });

  describe('the access log', () => {
    it('writes one line per request at info: the request id, method, URL, status and time, never the key', async () => {
      const id = `access-${Date.now()}`;
      const response = await raw(`${MERIT_CYCLES}?limit=2`, { headers: { 'x-request-id': id } });
      expect(response.status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
      const lines = server.logs.filter((line) => line.requestId === id);
      expect(lines).toHaveLength(1);
      const [line] = lines;
      expect(line).toMatchObject({
        level: 30,
        msg: 'request completed',
        req: { method: 'GET', url: `${MERIT_CYCLES}?limit=2` },
        res: { statusCode: 200 },
      });
      expect(typeof line?.responseTime).toBe('number');
      expect(JSON.stringify(line)).not.toContain(key);
    });
  });

  describe('malformed URLs', () => {
    it('a broken percent-encoding in a path parameter → 400 JSON body, not a 5xx', async () => {
      const path = `${MERIT_CYCLES}/%E0%A4%A`;
      const response = await raw(path);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(json(response)).toEqual(errorBody(path, 'Malformed URL', 400));
    });

    it.each([
      `${MERIT_CYCLES}/%E0%A4%A/employees`,
      `${MERIT_CYCLES}/%`,
      `${MERIT_CYCLES}/%ZZ/exchangeRates`,
      '/%E0%A4%A',
      `${MERIT_CYCLES}?status=%E0%A4%A`,
      `${MERIT_CYCLES}?%E0%A4%A=1`,
      `${MERIT_CYCLES}?nextCursor=%`,
    ])('%s → a 4xx with the standard JSON error body', async (path) => {
      const response = await raw(path);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      const body = json(response) as Record<string, unknown>;
      expect(body).toEqual(
        expect.objectContaining({
          timestamp: expect.stringMatching(ISO_UTC_MS),
          path: path.split('?')[0],
          message: expect.any(String),
          statusCode: response.status,
        }),
      );
    });
  });
});

describe('a real 500', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
    key = await server.createKey(ACME);
    await sql`drop table merit_cycle_employees`.execute(server.database.db);
  });
  afterAll(() => server.close());

  async function failing(headers: Record<string, string> = {}) {
    const path = employeesPath(CYCLE.annual2025);
    const response = await rawRequest(server.url, path, {
      headers: { 'x-api-key': key, ...headers },
    });
    return { path, response, text: response.body.toString('utf8') };
  }

  it('answers exactly {timestamp, path, message: "Internal Server Error", statusCode: 500}', async () => {
    const { path, response, text } = await failing();
    expect(response.status).toBe(500);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(text)).toEqual(errorBody(path, 'Internal Server Error', 500));
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual([
      'message',
      'path',
      'statusCode',
      'timestamp',
    ]);
  });

  it('puts no SQL, table name, driver name or stack trace in the body', async () => {
    const { text } = await failing();
    for (const leak of [
      'merit_cycle_employees',
      'select',
      'sqlite',
      'postgres',
      'relation',
      'no such table',
      'Error:',
      '    at ',
      '.ts:',
      '.js:',
    ]) {
      expect(text.toLowerCase(), leak).not.toContain(leak.toLowerCase());
    }
  });

  it('logs the error under the request id returned in x-request-id', async () => {
    const { response } = await failing();
    const id = response.headers['x-request-id'];
    expect(id).toMatch(REQUEST_ID_SHAPE);
    const errors = server.logs.filter((line) => line.requestId === id && line.level === 50);
    expect(errors.length).toBe(1);
    const err = errors[0]?.err as { message?: string } | undefined;
    expect(err?.message).toContain('merit_cycle_employees');
  });

  it('logs it under a valid incoming x-request-id, which the response echoes', async () => {
    const { response } = await failing({ 'x-request-id': 'trace-500-abc' });
    expect(response.status).toBe(500);
    expect(response.headers['x-request-id']).toBe('trace-500-abc');
    const errors = server.logs.filter(
      (line) => line.requestId === 'trace-500-abc' && line.level === 50,
    );
    expect(errors.length).toBe(1);
    expect((errors[0]?.err as { message?: string } | undefined)?.message).toContain(
      'merit_cycle_employees',
    );
  });

  it('keeps serving what does not need the broken table', async () => {
    const response = await server.request(cyclePath(CYCLE.annual2025), { key });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: string }).id).toBe(CYCLE.annual2025);
  });
});
