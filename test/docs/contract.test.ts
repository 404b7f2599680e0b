// The contract check that test/helpers/server.ts runs on every response of the suite:
// it must accept what the API really sends, and refuse what the document does not declare.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractViolations, type ObservedResponse } from '../helpers/openapi-contract.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORG = {
  organization: { slug: 'contract', name: 'Contract Corp', apiKeysEnabled: true },
  meritCycles: [],
};

async function observe(
  server: TestServer,
  target: string,
  key: string | null,
  method = 'GET',
  extra: Record<string, string> = {},
) {
  const headers: Record<string, string> =
    key === null ? { ...extra } : { 'x-api-key': key, ...extra };
  const response = await fetch(`${server.url}${target}`, { method, headers });
  return {
    method,
    target,
    status: response.status,
    headers: response.headers,
    body: await response.text(),
  } satisfies ObservedResponse;
}

function withHeaders(response: ObservedResponse, change: (headers: Headers) => void) {
  const headers = new Headers(response.headers);
  change(headers);
  return { ...response, headers };
}

describe('the contract check of every API response', () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer({ dataSets: [ORG], rateLimitPerSecond: 3 });
    key = await server.createKey('contract');
  });
  afterAll(async () => {
    await server.close();
  });

  it('accepts the real 200, 401, 404, 405, 422 and 429 answers', async () => {
    const observed = [
      await observe(server, '/ping', key),
      await observe(server, '/ping', null),
      await observe(server, '/v1/compensationPlanning/meritCycles/mc_unknown', key),
      await observe(server, '/no/such/path', null),
      await observe(server, '/ping', null, 'POST'),
      await observe(server, '/v1/compensationPlanning/meritCycles?limit=0', key),
    ];
    // The quota is 3 a second: keep asking until it is spent.
    let limited = await observe(server, '/ping', key);
    for (let i = 0; i < 10 && limited.status !== 429; i++)
      limited = await observe(server, '/ping', key);
    expect(observed.map((response) => response.status)).toEqual([200, 401, 404, 404, 405, 422]);
    expect(limited.status).toBe(429);
    for (const response of [...observed, limited]) expect(contractViolations(response)).toEqual([]);
  });

  it('accepts a real 304 to If-None-Match, with its ETag and no body', async () => {
    // A key of its own: the one above has spent its quota.
    const key = await server.createKey('contract', 'conditional');
    const first = await observe(server, '/ping', key);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^W\/"[\w-]{22}"$/);
    const again = await observe(server, '/ping', key, 'GET', { 'if-none-match': etag });
    expect({ status: again.status, body: again.body }).toEqual({ status: 304, body: '' });
    expect(contractViolations(first)).toEqual([]);
    expect(contractViolations(again)).toEqual([]);
  });

  it('refuses a status the operation does not declare', async () => {
    const pong = await observe(server, '/healthz', null);
    expect(contractViolations({ ...pong, status: 418 })).toEqual([
      'GET /healthz → 418: status 418 is not declared (declared: 200, 400, 405, 408, 414, 431, 500)',
    ]);
  });

  it('refuses a body that does not match the schema', async () => {
    const health = await observe(server, '/healthz', null);
    expect(contractViolations({ ...health, body: '{"status":"fine"}' })).toEqual([
      expect.stringMatching(/^GET \/healthz → 200: body does not match the document: \/status/),
    ]);
  });

  it('refuses a response without a required header, or with a header of the wrong form', async () => {
    const key = await server.createKey('contract', 'headers');
    const pong = await observe(server, '/ping', key);
    expect(pong.status).toBe(200);
    expect(contractViolations(withHeaders(pong, (headers) => headers.delete('ratelimit')))).toEqual(
      ['GET /ping → 200: required header RateLimit is missing'],
    );
    expect(
      contractViolations(withHeaders(pong, (headers) => headers.set('x-ratelimit-remaining', 'x'))),
    ).toEqual([expect.stringMatching(/^GET \/ping → 200: header X-RateLimit-Remaining: "x"/)]);
  });

  it('refuses an undocumented path that answers anything but 404', async () => {
    const missing = await observe(server, '/no/such/path', null);
    expect(contractViolations({ ...missing, status: 200 })).toEqual([
      'GET /no/such/path → 200: an undocumented path must answer 404',
    ]);
  });
});
