import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const LIST = '/v1/compensationPlanning/meritCycles';

describe('rate limit: 10 requests per second per key', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()], rateLimitPerSecond: 10 });
  });
  afterAll(() => server.close());
  // Each test starts in a fresh window of a fresh key.
  let key: string;
  beforeEach(async () => {
    key = await server.createKey(ACME);
  });

  it('sends the draft-11 RateLimit fields and the X-RateLimit fields on every authenticated response', async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await server.request('/ping', { key });
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-policy')).toBe('"default";q=10;w=1');
    expect(response.headers.get('ratelimit')).toBe('"default";r=9;t=1');
    expect(response.headers.get('x-ratelimit-limit')).toBe('10');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('9');
    // Epoch seconds at which the window that began with this request ends: within a
    // second of when the request was answered.
    const answered = Date.now() / 1000;
    const reset = Number(response.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(before);
    expect(reset).toBeLessThanOrEqual(Math.ceil(answered) + 1);
  });

  it('answers exactly 10 of 15 simultaneous requests and 429s the other 5 with the fixed body and Retry-After', async () => {
    const responses = await Promise.all(
      Array.from({ length: 15 }, () => server.request('/ping', { key })),
    );
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(limited).toHaveLength(5);
    for (const response of limited) {
      expect(await response.text()).toBe('{"message":"Too Many Requests","statusCode":429}');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(response.headers.get('ratelimit')).toBe('"default";r=0;t=1');
    }
  });

  it('counts every endpoint together, including answers that are errors', async () => {
    const expected: [string, number][] = [
      ['/ping', 200],
      [LIST, 200],
      [`${LIST}/${CYCLE.annual2025}`, 200],
      [`${LIST}/${CYCLE.annual2025}/exchangeRates`, 200],
      [`${LIST}/${CYCLE.annual2025}/employees`, 200],
      [`${LIST}?limit=101`, 422],
      [`${LIST}/mc_00000000-0000-4000-8000-000000000000`, 404],
      ['/ping', 200],
    ];
    // Sent at once, so that all eight fall in one window of the key's quota even on a
    // busy machine: together they take eight of its ten requests.
    const responses = await Promise.all(expected.map(([path]) => server.request(path, { key })));
    expect(responses.map((response) => response.status)).toEqual(
      expected.map(([, status]) => status),
    );
    const remaining = responses.map((response) =>
      Number(response.headers.get('x-ratelimit-remaining')),
    );
    expect(remaining.sort((a, b) => b - a)).toEqual([9, 8, 7, 6, 5, 4, 3, 2]);
  });

  it('refreshes the quota every second', async () => {
    for (let i = 0; i < 10; i++) expect((await server.request('/ping', { key })).status).toBe(200);
    expect((await server.request('/ping', { key })).status).toBe(429);
    await sleep(1_100);
    const refreshed = await server.request('/ping', { key });
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it("keeps each key's quota to itself", async () => {
    for (let i = 0; i < 11; i++) await server.request('/ping', { key });
    expect((await server.request('/ping', { key })).status).toBe(429);
    const other = await server.createKey(ACME, 'other');
    const response = await server.request('/ping', { key: other });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('9');
  });
});
