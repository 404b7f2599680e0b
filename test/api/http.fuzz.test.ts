// Property-based fuzzing of the whole HTTP surface (fast-check), on every database the
// suite runs: random methods, paths, query strings (repeated, empty, huge, unicode, broken
// percent-encoding), headers (keys of every shape, oversized headers) and cursors
// (random, truncated, edited, from another endpoint, from another organisation), sent
// through node:http from many loopback addresses, and raw bytes that are barely HTTP.
// Whatever is sent: never a 5xx, never a hang, always a JSON error body whose statusCode
// is the HTTP status, and never anything of another organisation.
//
// CI runs a fixed seed and a bounded number of runs; `npm run fuzz` runs many more
// (FUZZ_RUNS, FUZZ_SEED to replay a failure).
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBEX_SECOND_CYCLE, globexSecondCycleDataSet } from '../fixtures/api-data-sets.js';
import {
  ACME,
  ACME_LIST_ORDER,
  acmeDataSet,
  CYCLE,
  GLOBEX,
  globexDataSet,
  LARGE_CYCLE,
  largeCycleDataSet,
} from '../fixtures/data-sets.js';
import {
  employeesPath,
  MERIT_CYCLES,
  type Page,
  withCharacterChanged,
} from '../helpers/api-expectations.js';
import { type NodeResponse, nodeRequest, sendBytes } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 250);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_522);
const REQUEST_DEADLINE_MS = 5_000;
// Generous: a run takes about 10 ms here; the deadline only stops a hang.
const PROPERTY_TIMEOUT_MS = 60_000 + RUNS * 100;
const ERROR_KEYS = new Set(['timestamp', 'path', 'message', 'statusCode', 'validationErrors']);
const TOO_MANY = { message: 'Too Many Requests', statusCode: 429 };

const ACME_CYCLES = [...ACME_LIST_ORDER, LARGE_CYCLE];
const GLOBEX_CYCLES = [CYCLE.globex, GLOBEX_SECOND_CYCLE];
const GLOBEX_EMPLOYEES = [globexDataSet(), globexSecondCycleDataSet()].flatMap((dataSet) =>
  dataSet.meritCycles.flatMap((cycle) => (cycle.employees ?? []).map((e) => e.id ?? '')),
);
const GLOBEX_IDS = [...GLOBEX_CYCLES, ...GLOBEX_EMPLOYEES];

interface Fixture {
  server: TestServer;
  acme: string;
  globex: string;
  cursors: string[];
}

// --- arbitraries ----------------------------------------------------------------------

const latin1Text = fc.string({
  unit: fc.integer({ min: 0x21, max: 0xff }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const unicodeText = fc.string({ unit: 'binary', maxLength: 30 });
// What a header value may hold (node:http refuses control characters and DEL).
const headerSafeText = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
    .map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const brokenPercent = fc.constantFrom(
  '%',
  '%Z',
  '%E0%A4%A',
  '%C3',
  '%00',
  '%ZZ%',
  '%%41',
  '%u0041',
  '%2',
  '%E2%82',
);
const hugeText = fc.integer({ min: 1_000, max: 9_000 }).map((n) => 'A'.repeat(n));

/** Any text as it may sit in a URL: raw latin1, percent-encoded unicode, broken escapes. */
const urlText = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '-1',
    '101',
    '100',
    '1',
    '2.5',
    '1e2',
    'null',
    'active',
    '2025-01-01',
    '2025-02-30',
    '__proto__',
    'constructor',
  ),
  latin1Text,
  unicodeText.map(encodeURIComponent),
  brokenPercent,
  fc.tuple(latin1Text, brokenPercent, latin1Text).map((parts) => parts.join('')),
  hugeText,
);

function arbitraries(f: Fixture) {
  const id = fc.oneof(
    fc.constantFrom(...ACME_CYCLES, ...GLOBEX_CYCLES, ...GLOBEX_EMPLOYEES),
    fc.uuid().map((uuid) => `mc_${uuid}`),
    fc.uuid().map((uuid) => `mce_${uuid}`),
    fc.constantFrom(...ACME_CYCLES).map((cycle) => cycle.toUpperCase()),
    urlText,
  );
  const path = fc.oneof(
    fc.constantFrom(
      '/ping',
      MERIT_CYCLES,
      '/healthz',
      '/readyz',
      '/',
      '/v1',
      '/docs/json',
      '/app/sign-in',
    ),
    id.map((value) => `${MERIT_CYCLES}/${value}`),
    id.map((value) => `${MERIT_CYCLES}/${value}/exchangeRates`),
    id.map((value) => `${MERIT_CYCLES}/${value}/employees`),
    fc.array(urlText, { minLength: 1, maxLength: 5 }).map((segments) => `/${segments.join('/')}`),
    fc
      .tuple(
        fc.constantFrom(MERIT_CYCLES, '/ping'),
        fc.constantFrom('/', '//', '/.', '/..', '/%2e%2e', '/%2F', ';x', '#x'),
      )
      .map((parts) => parts.join('')),
  );
  const cursor = fc.oneof(
    fc.constantFrom(...f.cursors),
    fc.tuple(fc.constantFrom(...f.cursors), fc.nat()).map(([c, n]) => c.slice(0, n % c.length)),
    fc
      .tuple(fc.constantFrom(...f.cursors), fc.nat(), fc.constantFrom('A', '_', '-', '.', '%', '='))
      .map(([c, n, char]) => `${c.slice(0, n % c.length)}${char}${c.slice((n % c.length) + 1)}`),
    fc
      .base64String({ maxLength: 200 })
      .map((text) => text.replaceAll('+', '-').replaceAll('/', '_')),
    fc
      .tuple(fc.base64String({ maxLength: 80 }), fc.base64String({ maxLength: 30 }))
      .map(([a, b]) => `${a}.${b}`),
    urlText,
  );
  const parameterName = fc.oneof(
    fc.constantFrom(
      'limit',
      'status',
      'gt',
      'gte',
      'lt',
      'lte',
      'startDate[gte]',
      'startDate[lt]',
      'startDate[gte][x]',
      'startDate',
      'nextCursor',
      'stauts',
      '__proto__',
      'constructor',
      'limit[]',
      '',
    ),
    urlText,
  );
  const parameter = fc.oneof(
    fc.tuple(parameterName, urlText).map(([name, value]) => `${name}=${value}`),
    cursor.map((value) => `nextCursor=${value}`),
    parameterName,
    fc.constant('&'),
    fc.constant('='),
  );
  const query = fc.oneof(
    fc.constant(''),
    fc.array(parameter, { maxLength: 8 }).map((parts) => `?${parts.join('&')}`),
    // The same parameter repeated.
    fc
      .tuple(parameter, fc.integer({ min: 2, max: 5 }))
      .map(([part, n]) => `?${Array(n).fill(part).join('&')}`),
  );
  // One character after the `cpk_` prefix changed.
  const flip = (key: string, at: number) => withCharacterChanged(key, 4 + (at % (key.length - 4)));
  const apiKey = fc.oneof(
    fc.constant<string | undefined>(f.acme),
    fc.constant<string | undefined>(f.globex),
    fc.constant<string | undefined>(undefined),
    fc.constantFrom(
      '',
      ' ',
      'cpk_',
      `${f.acme} `,
      ` ${f.acme}`,
      `Bearer ${f.acme}`,
      f.acme.toLowerCase(),
      f.acme.slice(0, -1),
      `${f.acme}x`,
    ),
    fc.nat().map((at) => flip(f.acme, at)),
    fc.stringMatching(/^cpk_[0-9A-Za-z]{42}$/),
    headerSafeText,
    hugeText,
  );
  const headerValue = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 60,
  });
  const extraHeaders = fc.record(
    {
      'accept-encoding': fc.constantFrom(
        'gzip',
        'br',
        'deflate',
        'identity',
        '*',
        'gzip;q=0',
        'br;q=1, gzip;q=0.5',
        'zstd',
        'x-garbage',
      ),
      'x-request-id': fc.oneof(headerValue, hugeText),
      'content-type': fc.oneof(
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
        ),
        headerValue,
      ),
      accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml'),
      'x-forwarded-for': fc.constantFrom('1.2.3.4', '127.0.0.1, 10.0.0.1', 'garbage'),
      'x-forwarded-proto': fc.constantFrom('https', 'http', 'gopher'),
      'x-oversized': fc.integer({ min: 10_000, max: 24_000 }).map((n) => 'h'.repeat(n)),
    },
    { requiredKeys: [] },
  );
  const method = fc.constantFrom(
    'GET',
    'GET',
    'GET',
    'HEAD',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'OPTIONS',
    'TRACE',
    'PROPFIND',
    'SEARCH',
  );
  const body = fc.option(
    fc.oneof(fc.constant('{}'), fc.constant('{"name":"x"'), headerValue, hugeText),
    { nil: undefined },
  );
  return fc.record({
    method,
    target: fc.tuple(path, query).map(([p, q]) => `${p}${q}`),
    apiKey,
    headers: extraHeaders,
    body,
    from: fc.integer({ min: 2, max: 254 }).map((n) => `127.0.0.${n}`),
  });
}

// --- the properties checked on every answer ----------------------------------------------

function checkAnswer(
  f: Fixture,
  sent: { method: string; target: string; apiKey: string | undefined },
  response: NodeResponse,
) {
  const where = `${sent.method} ${sent.target.slice(0, 200)}`;
  expect(response.status, where).toBeGreaterThanOrEqual(200);
  expect(response.status, where).toBeLessThan(500);
  if (sent.method === 'HEAD' && response.body === '') return;
  expect(response.headers['content-type'] ?? '', where).toMatch(
    /^(application\/json|text\/html|text\/css|application\/javascript)/,
  );
  if (!String(response.headers['content-type']).startsWith('application/json')) {
    // Only the web application's pages and the reference's assets are not JSON.
    expect(sent.target, where).toMatch(/^\/(app|docs)(\/|\?|$)/);
    return;
  }
  const text = decoded(response);
  const body = JSON.parse(text) as Record<string, unknown>;
  if (response.status >= 400) {
    expect(body.statusCode, where).toBe(response.status);
    if (response.status === 429) expect(body, where).toEqual(TOO_MANY);
    else {
      for (const key of Object.keys(body))
        expect(ERROR_KEYS.has(key), `${where}: ${key}`).toBe(true);
      expect(typeof body.message, where).toBe('string');
      expect(typeof body.timestamp, where).toBe('string');
      expect(typeof body.path, where).toBe('string');
    }
  }
  // Never another organisation's data: a 2xx for Acme's key names none of Globex's
  // objects, and an error names one only when the request itself did (the echoed path).
  const other = sent.apiKey === f.globex ? ACME_CYCLES : GLOBEX_IDS;
  const named = decodeSafely(sent.target);
  for (const id of other) {
    if (response.status < 300 || !named.includes(id)) {
      expect(text.includes(id), `${where} leaked ${id}`).toBe(false);
    }
  }
}

/** The body as text, decompressed when the server compressed it. */
function decoded(response: NodeResponse): string {
  const raw = response.rawBody;
  switch (response.headers['content-encoding']) {
    case 'gzip':
      return gunzipSync(raw).toString('utf8');
    case 'deflate':
      return inflateSync(raw).toString('utf8');
    case 'br':
      return brotliDecompressSync(raw).toString('utf8');
    default:
      return raw.toString('utf8');
  }
}

function decodeSafely(text: string): string {
  try {
    return `${text} ${decodeURIComponent(text)}`;
  } catch {
    return text;
  }
}

describe('HTTP fuzzing', () => {
  const f = {} as Fixture;

  beforeAll(async () => {
    f.server = await startTestServer({
      dataSets: [acmeDataSet(), largeCycleDataSet(30), globexDataSet(), globexSecondCycleDataSet()],
    });
    f.acme = await f.server.createKey(ACME);
    f.globex = await f.server.createKey(GLOBEX);
    const cursorOf = async (path: string, key: string) => {
      const response = await nodeRequest(f.server.url, path, { headers: { 'x-api-key': key } });
      const page = JSON.parse(response.body) as Page<unknown>;
      if (!page.nextCursor) throw new Error(`${path} has one page`);
      return page.nextCursor;
    };
    f.cursors = [
      await cursorOf(`${MERIT_CYCLES}?limit=1`, f.acme),
      await cursorOf(`${MERIT_CYCLES}?limit=2&status=active`, f.acme),
      await cursorOf(`${employeesPath(LARGE_CYCLE)}?limit=3`, f.acme),
      await cursorOf(`${employeesPath(CYCLE.annual2025)}?limit=1`, f.acme),
      await cursorOf(`${MERIT_CYCLES}?limit=1`, f.globex),
      await cursorOf(`${employeesPath(GLOBEX_SECOND_CYCLE)}?limit=1`, f.globex),
    ];
  });
  afterAll(() => f.server.close());

  it(
    `answers ${RUNS} random requests with a 2xx–4xx JSON answer, in time, and nothing of another organisation`,
    async () => {
      await fc.assert(
        fc.asyncProperty(arbitraries(f), async (sent) => {
          const headers: Record<string, string> = { ...sent.headers };
          if (sent.apiKey !== undefined) headers['x-api-key'] = sent.apiKey;
          const response = await nodeRequest(f.server.url, sent.target, {
            method: sent.method,
            headers,
            ...(sent.body === undefined || sent.method === 'GET' || sent.method === 'HEAD'
              ? {}
              : { body: sent.body }),
            localAddress: sent.from,
            deadlineMs: REQUEST_DEADLINE_MS,
          });
          checkAnswer(f, sent, response);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'every 200 for Acme’s key holds only Acme’s objects, whatever the query',
    async () => {
      const acmeEmployeeIds = new Set(
        [acmeDataSet(), largeCycleDataSet(30)].flatMap((dataSet) =>
          dataSet.meritCycles.flatMap((cycle) => (cycle.employees ?? []).map((e) => e.id ?? '')),
        ),
      );
      const query = fc.array(
        fc.oneof(
          fc.constantFrom(
            'limit=1',
            'limit=100',
            'status=active',
            'status=finalized',
            'gte=2024-01-01',
            'lt=2026-01-01',
            'startDate[lte]=2025-06-30',
          ),
          fc.constantFrom(...f.cursors).map((c) => `nextCursor=${c}`),
        ),
        { maxLength: 4 },
      );
      const path = fc.constantFrom(
        MERIT_CYCLES,
        ...[...ACME_CYCLES, ...GLOBEX_CYCLES].map(employeesPath),
      );
      await fc.assert(
        fc.asyncProperty(path, query, async (p, q) => {
          const response = await nodeRequest(f.server.url, `${p}?${q.join('&')}`, {
            headers: { 'x-api-key': f.acme },
            deadlineMs: REQUEST_DEADLINE_MS,
          });
          expect(response.status).toBeLessThan(500);
          if (response.status !== 200) return;
          const page = JSON.parse(response.body) as Page<{ id: string }>;
          for (const item of page.data) {
            expect(ACME_CYCLES.includes(item.id) || acmeEmployeeIds.has(item.id), item.id).toBe(
              true,
            );
          }
        }),
        { numRuns: Math.ceil(RUNS / 2), seed: SEED },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'answers raw bytes that are barely HTTP with a JSON error (or a normal answer), never a 5xx or a hang',
    async () => {
      const token = fc.string({
        unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
        minLength: 1,
        maxLength: 12,
      });
      const anyByte = fc.string({
        unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)),
        maxLength: 40,
      });
      const requestLine = fc.oneof(
        fc
          .tuple(
            fc.constantFrom('GET', 'HEAD', 'POST', 'get', 'G ET', 'GET\t'),
            fc.oneof(
              fc.constantFrom('/ping', MERIT_CYCLES, '*', 'http://x/ping', '', '/ping/../ping'),
              anyByte.map((t) => `/${t}`),
            ),
            fc.constantFrom(
              'HTTP/1.1',
              'HTTP/1.0',
              'HTTP/2.0',
              'HTTP/1.1x',
              'HTTP/9',
              '',
              'http/1.1',
            ),
          )
          .map(([m, t, v]) => `${m} ${t} ${v}`),
        anyByte,
      );
      const header = fc.oneof(
        fc
          .tuple(
            token,
            fc.string({
              unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
              maxLength: 40,
            }),
          )
          .map(([n, v]) => `${n}: ${v}`),
        fc.constantFrom(
          'Host: x',
          'Host:',
          'Host: x\r\nHost: y',
          'Content-Length: 5',
          'Content-Length: -1',
          'Content-Length: 1, 2',
          'Transfer-Encoding: chunked',
          'Transfer-Encoding: gzip, chunked',
          'Expect: 100-continue',
          'x-api-key: cpk_x',
          ' folded: header',
          'NoColon',
        ),
        anyByte,
      );
      await fc.assert(
        fc.asyncProperty(
          requestLine,
          fc.array(header, { maxLength: 6 }),
          fc.constantFrom('', 'hello', '0\r\n\r\n', 'zz\r\n'),
          fc.integer({ min: 2, max: 254 }),
          async (line, headers, body, n) => {
            const bytes = Buffer.from(
              `${line}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`,
              'latin1',
            );
            const response = await sendBytes(f.server.url, [bytes], {
              // Above the server's 15 s request timeout: a body announced but never sent gets 408.
              deadlineMs: 20_000,
              firstResponse: true,
              localAddress: `127.0.0.${n}`,
            });
            // Every request gets an answer before the connection closes: a body that is
            // announced but never sent gets 408 at the request timeout.
            expect(response.status, line.slice(0, 80)).not.toBe(0);
            expect(response.status, line.slice(0, 80)).toBeGreaterThanOrEqual(100);
            expect(response.status, line.slice(0, 80)).toBeLessThan(500);
            if (response.status >= 400 && response.body !== '') {
              const parsed = JSON.parse(response.body) as { statusCode?: number };
              expect(parsed.statusCode).toBe(response.status);
            }
          },
        ),
        { numRuns: Math.ceil(RUNS / 2), seed: SEED },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('logged no 5xx and no error while being fuzzed', () => {
    const errors = f.server.logs.filter((line) => Number(line.level) >= 50);
    expect(errors).toEqual([]);
    const served = f.server.logs.filter(
      (line) => (line.res as { statusCode?: number } | undefined)?.statusCode !== undefined,
    );
    expect(served.length).toBeGreaterThan(RUNS / 2);
    for (const line of served)
      expect((line.res as { statusCode: number }).statusCode).toBeLessThan(500);
  });
});
