// The tests of ETag / If-None-Match (docs/api-behaviour.md, "Conditional requests"): every 200 of the
// API carries a weak ETag, the SHA-256 of its exact JSON text; a request whose
// If-None-Match names it gets 304 without a body, and that 304 gives its request back to
// the key's quota. The 304s are read with fetch directly: openapi.json (the contract that
// server.request() checks) does not declare them yet.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from './server.js';

const LIST = '/v1/compensationPlanning/meritCycles';
const ENDPOINTS = [
  '/ping',
  LIST,
  `${LIST}?limit=2`,
  `${LIST}/${CYCLE.annual2025}`,
  `${LIST}/${CYCLE.annual2025}/exchangeRates`,
  `${LIST}/${CYCLE.annual2025}/columns`,
  `${LIST}/${CYCLE.annual2025}/employees?limit=2`,
];

const expectedEtag = (body: string) =>
  `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

/**
 * The conditional-request tests, on a server that counts the quota in this process or,
 * given `redisUrl`, in that Redis (where giving a 304's request back takes a command).
 */
export function conditionalRequestsSuite(name: string, redisUrl: string | undefined): void {
  describe(name, () => {
    let server: TestServer;
    let key: string;

    beforeAll(async () => {
      server = await startTestServer({
        dataSets: [acmeDataSet()],
        rateLimitPerSecond: 10,
        ...(redisUrl ? { redisUrl } : {}),
      });
    });
    afterAll(() => server.close());

    const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      fetch(`${server.url}${path}`, { method, headers: { 'x-api-key': key, ...headers } });

    it.each(ENDPOINTS)(
      'GET %s: 200 with ETag W/"<SHA-256 of the body>", then 304 without a body for If-None-Match',
      async (path) => {
        key = await server.createKey(ACME);
        const first = await server.request(path, { key });
        expect(first.status).toBe(200);
        const body = await first.text();
        const etag = first.headers.get('etag');
        expect(etag).toBe(expectedEtag(body));

        const again = await get(path, { 'if-none-match': etag ?? '' });
        expect(again.status).toBe(304);
        expect(await again.text()).toBe('');
        expect(again.headers.get('etag')).toBe(etag);
        expect(again.headers.get('content-type')).toBeNull();
        expect(again.headers.get('content-length')).toBeNull();
        expect(again.headers.get('x-request-id')).toMatch(/.+/);
        expect(again.headers.get('cache-control')).toBe('no-store');
      },
    );

    it('answers 200 with the body for an If-None-Match that names another tag, and 304 for * or a list holding the tag', async () => {
      key = await server.createKey(ACME);
      const path = `${LIST}/${CYCLE.annual2025}`;
      const first = await get(path);
      const etag = first.headers.get('etag') ?? '';
      const other = await get(path, { 'if-none-match': 'W/"somethingelse"' });
      expect(other.status).toBe(200);
      expect(await other.text()).toBe(await first.text());
      expect(other.headers.get('etag')).toBe(etag);
      expect((await get(path, { 'if-none-match': '*' })).status).toBe(304);
      expect((await get(path, { 'if-none-match': `"a", ${etag}` })).status).toBe(304);
      // Weak comparison: the opaque tag without W/ matches too.
      expect((await get(path, { 'if-none-match': etag.slice(2) })).status).toBe(304);
    });

    it('gives the same ETag to the compressed body, and 304 to a compressed request', async () => {
      key = await server.createKey(ACME);
      const path = `${LIST}/${CYCLE.annual2025}/employees?limit=100`;
      const plain = await get(path);
      const etag = plain.headers.get('etag') ?? '';
      const gzip = await get(path, { 'accept-encoding': 'gzip' });
      expect(gzip.headers.get('content-encoding')).toBe('gzip');
      expect(gzip.headers.get('etag')).toBe(etag);
      const notModified = await get(path, { 'accept-encoding': 'gzip', 'if-none-match': etag });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('content-encoding')).toBeNull();
    });

    it('answers HEAD with the ETag of the GET body, and 304 for HEAD with If-None-Match', async () => {
      key = await server.createKey(ACME);
      const path = `${LIST}/${CYCLE.annual2025}/employees?limit=2`;
      const body = await (await get(path)).text();
      const head = await get(path, {}, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.headers.get('etag')).toBe(expectedEtag(body));
      const notModified = await get(path, { 'if-none-match': expectedEtag(body) }, 'HEAD');
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('etag')).toBe(expectedEtag(body));
    });

    it('does not count a 304 against the quota: 15 conditional requests in a row, then 10 more requests are all answered', async () => {
      key = await server.createKey(ACME);
      const path = `${LIST}/${CYCLE.annual2025}`;
      const first = await get(path);
      expect(first.headers.get('x-ratelimit-remaining')).toBe('9');
      const etag = first.headers.get('etag') ?? '';
      const statuses: number[] = [];
      for (let i = 0; i < 15; i++) {
        const response = await get(path, { 'if-none-match': etag });
        statuses.push(response.status);
        // What the 304 took was given back: the quota is where the 200 left it (or fresh,
        // when a new second began meanwhile).
        expect(['9', '10']).toContain(response.headers.get('x-ratelimit-remaining'));
        expect(response.headers.get('ratelimit')).toMatch(/^"default";r=(9|10);t=\d+$/);
      }
      expect(statuses).toEqual(Array.from({ length: 15 }, () => 304));
      const burst = await Promise.all(Array.from({ length: 9 }, () => get(path)));
      expect(burst.map((response) => response.status)).toEqual(
        Array.from({ length: 9 }, () => 200),
      );
    });

    it('still counts 200s and errors: a conditional request over the quota gets 429', async () => {
      key = await server.createKey(ACME);
      const path = `${LIST}/${CYCLE.annual2025}`;
      const etag = (await get(path)).headers.get('etag') ?? '';
      const burst = await Promise.all(Array.from({ length: 12 }, () => get('/ping')));
      expect(burst.filter((response) => response.status === 429).length).toBeGreaterThan(0);
      const limited = await get(path, { 'if-none-match': etag });
      if (limited.status !== 304) {
        // Unless a new second began in between, the quota is spent: authentication and
        // the quota come before the answer is known.
        expect(limited.status).toBe(429);
        expect(await limited.text()).toBe('{"message":"Too Many Requests","statusCode":429}');
      }
    });

    it('answers 401, not 304, to a conditional request without a valid key', async () => {
      const response = await fetch(`${server.url}/ping`, { headers: { 'if-none-match': '*' } });
      expect(response.status).toBe(401);
      expect(response.headers.get('etag')).toBeNull();
    });

    it('changes the ETag when the data changes', async () => {
      key = await server.createKey(ACME);
      const path = `${LIST}/${CYCLE.annual2025}`;
      const before = await get(path);
      const etag = before.headers.get('etag') ?? '';
      const dataSet = acmeDataSet();
      const cycle = dataSet.meritCycles[0];
      if (!cycle) throw new Error('fixture without cycles');
      cycle.name = '2025 Annual Merit (renamed)';
      await server.load(dataSet);
      const after = await get(path, { 'if-none-match': etag });
      expect(after.status).toBe(200);
      const body = await after.text();
      expect(JSON.parse(body).name).toBe('2025 Annual Merit (renamed)');
      expect(after.headers.get('etag')).toBe(expectedEtag(body));
      expect(after.headers.get('etag')).not.toBe(etag);
    });
  });
}
