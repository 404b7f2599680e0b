// No stack trace, SQL, file path or key material in any response, and no key material in
// any log line (OWASP API8 and API3): many kinds of errors are driven — 400, 401, 404,
// 405, 413, 414, 422, 429, 431, parser errors and a real 500 — and every response body
// and every captured log line is scanned. The one kind of line allowed to carry a cause
// (message and stack) is the error-level line of a 500, which operators need; it still
// never carries a secret.
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE, GLOBEX, globexDataSet } from '../fixtures/data-sets.js';
import {
  cyclePath,
  employeesPath,
  MERIT_CYCLES,
  type Page,
  withWrongChecksum,
} from '../helpers/api-expectations.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { nodeRequest, sendBytes } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const STACK = [/\n\s+at /, /\bat [\w.<>]+ \(/, /Error: /, /\.(ts|js|mjs|cjs):\d+/];
const SQL = [
  /\bselect\b[^"]*\bfrom\b/i,
  /\binsert into\b/i,
  /\bno such table\b/i,
  /\brelation "/i,
  /sqlite/i,
  /postgres/i,
  /merit_cycle_employees|api_keys|server_secrets|secret_hash|organization_id/,
];
const PATHS = [
  /\/work\//,
  /node_modules/,
  /file:\/\//,
  new RegExp(escapeRegExp(REPO_ROOT)),
  new RegExp(escapeRegExp(tmpdir())),
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('no leaks in responses or logs', () => {
  let server: TestServer;
  let acme: string;
  let globex: string;
  const secrets: string[] = [];
  const bodies: { what: string; status: number; body: string }[] = [];

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), globexDataSet()] });
    acme = await server.createKey(ACME);
    globex = await server.createKey(GLOBEX);
    const { value: cursorSecret } = await server.database.db
      .selectFrom('server_secrets')
      .select('value')
      .where('name', '=', 'cursor-signing-key')
      .executeTakeFirstOrThrow();
    const hashes = await server.database.db.selectFrom('api_keys').select('secret_hash').execute();
    for (const key of [acme, globex]) {
      secrets.push(
        key,
        key.slice(4, 20),
        createHash('sha256').update(key).digest('hex'),
        createHash('sha256').update(key).digest('base64'),
        createHash('sha256').update(key).digest('base64url'),
      );
    }
    secrets.push(cursorSecret, ...hashes.map((row) => row.secret_hash));
  });
  afterAll(() => server.close());

  async function drive(
    what: string,
    target: string,
    options: Parameters<typeof nodeRequest>[2] = {},
  ) {
    const response = await nodeRequest(server.url, target, options);
    bodies.push({ what, status: response.status, body: response.body });
    return response;
  }

  it('drives every kind of error, each answered with its own status', async () => {
    const listCursor = (
      JSON.parse(
        (await drive('200 list', `${MERIT_CYCLES}?limit=1`, { headers: { 'x-api-key': globex } }))
          .body,
      ) as Page<unknown>
    ).nextCursor;
    const withKey = { headers: { 'x-api-key': acme } };
    const cases: [string, string, Parameters<typeof nodeRequest>[2], number][] = [
      ['401 missing key', '/ping', {}, 401],
      ['401 wrong checksum', '/ping', { headers: { 'x-api-key': withWrongChecksum(acme) } }, 401],
      ['401 key in the query string', `/ping?x-api-key=${acme}`, {}, 401],
      ['401 key as a bearer token', '/ping', { headers: { authorization: `Bearer ${acme}` } }, 401],
      ['404 unknown path', '/nope', withKey, 404],
      ['404 foreign cycle', cyclePath(CYCLE.globex), withKey, 404],
      ['404 long parameter', cyclePath('x'.repeat(200)), withKey, 404],
      ['405', MERIT_CYCLES, { ...withKey, method: 'DELETE' }, 405],
      ['400 malformed URL', `${MERIT_CYCLES}/%E0%A4%A`, withKey, 400],
      ['400 invented cursor', `${MERIT_CYCLES}?nextCursor=abc.def`, withKey, 400],
      ['400 foreign cursor', `${MERIT_CYCLES}?nextCursor=${listCursor}`, withKey, 400],
      [
        '400 cursor of another list',
        `${employeesPath(CYCLE.annual2025)}?nextCursor=${listCursor}`,
        withKey,
        400,
      ],
      ['422 limit', `${MERIT_CYCLES}?limit=101&status=x&gte=2025-02-30&stauts=1`, withKey, 422],
      ['422 key as a parameter', `${MERIT_CYCLES}?apiKey=${acme}`, withKey, 422],
      [
        '413 body',
        '/nope',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"k":"${'a'.repeat(70_000)}"}`,
        },
        413,
      ],
      ['414 URL', `/ping?x=${'a'.repeat(9_000)}`, withKey, 414],
      [
        '400 bad JSON body',
        '/nope',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":' },
        400,
      ],
      [
        '404 unknown body type',
        '/nope',
        { method: 'POST', headers: { 'content-type': 'application/x-unknown' }, body: 'x' },
        404,
      ],
    ];
    for (const [what, target, options, status] of cases) {
      const response = await drive(what, target, options);
      // Soft: one wrong status still drives the rest, which the next two tests scan.
      expect.soft(response.status, what).toBe(status);
    }
    // What the HTTP parser refuses, with a real key in the headers.
    for (const [what, bytes, status] of [
      [
        '431 headers',
        `GET /ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${acme}\r\nx-f: ${'a'.repeat(17_000)}\r\n\r\n`,
        431,
      ],
      [
        '400 parser',
        `GET /ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${acme}\r\nContent-Length: zz\r\n\r\n`,
        400,
      ],
      ['400 garbage', `\u0000\u0001${acme}\r\n\r\n`, 400],
    ] as const) {
      const response = await sendBytes(server.url, [bytes]);
      bodies.push({ what, status: response.status, body: response.body });
      expect.soft(response.status, what).toBe(status);
    }
    // Failed authentication until the address is throttled (429), from its own address.
    let throttled = 0;
    for (let i = 0; i < 22; i++) {
      const response = await drive('401/429 guessing', '/ping', {
        headers: { 'x-api-key': `cpk_${String(i).padStart(42, '0')}` },
        localAddress: '127.0.0.9',
      });
      if (response.status === 429) throttled++;
    }
    expect.soft(throttled).toBe(2);
    // A real 500: the table the employee list reads is gone.
    await sql`drop table merit_cycle_employees`.execute(server.database.db);
    const failed = await drive('500', employeesPath(CYCLE.annual2025), withKey);
    expect(failed.status).toBe(500);
  });

  it('no response body holds a stack trace, SQL, a file path or key material', () => {
    expect(bodies.length).toBeGreaterThan(40);
    for (const { what, status, body } of bodies) {
      const where = `${what} (${status}): ${body.slice(0, 300)}`;
      // The answer to a request that put a key in its URL echoes that URL's path only.
      for (const pattern of [...STACK, ...SQL, ...PATHS]) expect(body, where).not.toMatch(pattern);
      for (const secret of secrets) expect(body.includes(secret), where).toBe(false);
      if (status >= 400 && body !== '') {
        expect((JSON.parse(body) as { statusCode: number }).statusCode, where).toBe(status);
      }
    }
  });

  it('no log line holds key material, and only the 500’s error line holds a cause', () => {
    // One access line per answered request (and the 500's error line).
    expect(server.logs.length).toBeGreaterThan(40);
    const causes = server.logs.filter((line) => Number(line.level) >= 50);
    expect(causes.map((line) => line.msg)).toEqual(['request failed']);
    for (const line of server.logs) {
      const text = JSON.stringify(line);
      for (const secret of secrets) expect(text.includes(secret), text.slice(0, 300)).toBe(false);
      expect(text).not.toMatch(/cpk_[0-9A-Za-z]{12,}/);
      if (Number(line.level) >= 50) continue;
      for (const pattern of [...STACK, ...SQL])
        expect(text, text.slice(0, 300)).not.toMatch(pattern);
    }
  });
});
