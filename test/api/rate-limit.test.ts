import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { nodeRequest } from '../helpers/raw-http.js';
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

  it('answers exactly 10 of 25 simultaneous requests that read the database and 429s the other 15: the quota alone refuses, never a bound on requests in flight', async () => {
    const page = `${LIST}/${CYCLE.annual2025}/employees?limit=100`;
    const responses = await Promise.all(
      Array.from({ length: 25 }, () => server.request(page, { key })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array(10).fill(200), ...Array(15).fill(429)]);
    for (const response of responses.filter((r) => r.status === 429)) {
      expect(await response.text()).toBe('{"message":"Too Many Requests","statusCode":429}');
      expect(response.headers.get('ratelimit')).toBe('"default";r=0;t=1');
    }
  });

  describe('every answer to a request with a valid key is counted and labelled', () => {
    const labelled = async (response: { headers: Record<string, unknown> }) => ({
      limit: response.headers['x-ratelimit-limit'],
      policy: response.headers['ratelimit-policy'],
      remaining: response.headers['x-ratelimit-remaining'],
    });

    it.each([
      ['an unknown path', 404, '/nope', { method: 'GET' }],
      [
        'a merit cycle id of 300 characters',
        404,
        `${LIST}/mc_${'a'.repeat(300)}`,
        { method: 'GET' },
      ],
      [
        'the employees of a merit cycle id of 300 characters',
        404,
        `${LIST}/mc_${'a'.repeat(300)}/employees`,
        { method: 'GET' },
      ],
      ['a wrong method', 405, LIST, { method: 'DELETE' }],
      [
        'a body too large',
        413,
        '/nope',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"k":"${'a'.repeat(70_000)}"}`,
        },
      ],
      [
        'a body that is not JSON',
        400,
        '/nope',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":' },
      ],
    ] as const)('%s → %i with the quota headers, counted', async (_, status, target, options) => {
      const headers = { ...('headers' in options ? options.headers : {}), 'x-api-key': key };
      const first = await nodeRequest(server.url, target, { ...options, headers });
      expect(first.status).toBe(status);
      expect(await labelled(first)).toEqual({
        limit: '10',
        policy: '"default";q=10;w=1',
        remaining: '9',
      });
      // It counted: the next request of the key has one fewer left.
      const next = await server.request('/ping', { key });
      expect(next.headers.get('x-ratelimit-remaining')).toBe('8');
    });

    it('without a key an unknown path is a plain 404: no quota headers, nothing counted', async () => {
      const response = await nodeRequest(server.url, '/nope');
      expect(response.status).toBe(404);
      expect(response.headers['x-ratelimit-remaining']).toBeUndefined();
      expect(response.headers.ratelimit).toBeUndefined();
      expect((await server.request('/ping', { key })).headers.get('x-ratelimit-remaining')).toBe(
        '9',
      );
    });

    it('with a key that is not valid an unknown path is 401, as every path is', async () => {
      const response = await nodeRequest(server.url, '/nope', {
        headers: { 'x-api-key': 'cpk_not-a-key' },
      });
      expect(response.status).toBe(401);
      expect(JSON.parse(response.body)).toMatchObject({ statusCode: 401, path: '/nope' });
      expect(response.headers['x-ratelimit-remaining']).toBeUndefined();
    });
  });
});

describe('many requests of one key in parallel, within its quota', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()], rateLimitPerSecond: 100_000 });
  });
  afterAll(() => server.close());

  it('30 parallel page walks of one key (a report refreshing its cycles) are all answered 200', async () => {
    const key = await server.createKey(ACME);
    const walk = async () => {
      const statuses: number[] = [];
      let next: string | null = `${LIST}/${CYCLE.annual2025}/employees?limit=1`;
      while (next !== null) {
        const response = await server.request(next, { key });
        statuses.push(response.status);
        const page = (await response.json()) as { nextCursor: string | null };
        next = page.nextCursor
          ? `${LIST}/${CYCLE.annual2025}/employees?limit=1&nextCursor=${page.nextCursor}`
          : null;
      }
      return statuses;
    };
    const everyone = (await (
      await server.request(`${LIST}/${CYCLE.annual2025}/employees?limit=100`, { key })
    ).json()) as { data: unknown[] };
    const walks = await Promise.all(Array.from({ length: 30 }, walk));
    // Each walk reads one page per employee of the cycle, every one answered.
    for (const statuses of walks) {
      expect(statuses).toEqual(Array(everyone.data.length).fill(200));
    }
  });
});
