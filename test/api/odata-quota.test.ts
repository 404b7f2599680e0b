// The key's quota on the OData feed (docs/odata.md, "Quota"): BI tools do not retry a 429,
// so a feed request over the quota waits for the next second's quota, at most 5 s; past
// that it gets the 429 with Retry-After, in the OData error form. REST keeps its 429.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEEDCO, feedDataSet } from '../fixtures/feed-data-sets.js';
import { feed } from '../helpers/feed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the OData feed over its key quota', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet()], rateLimitPerSecond: 2 });
  });
  afterAll(() => server.close());

  it('waits for the next second instead of answering 429, where REST answers 429', async () => {
    const key = await server.createKey(FEEDCO, 'waits');
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => feed(server, '/Employees/$count', { key })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // Five requests at two a second: the last ones were served in a later second.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const rest = await Promise.all(
      Array.from({ length: 4 }, () => server.request('/ping', { key })),
    );
    expect(rest.map((r) => r.status)).toContain(429);
  });

  it('answers 429 with Retry-After and the OData error body once the wait would pass 5 s', async () => {
    const key = await server.createKey(FEEDCO, 'too-many');
    // Two a second: in 5 s of waiting at most 12 are served (this second's and five more).
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => feed(server, '/MeritCycles?$select=id', { key })),
    );
    const refused = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(12);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    for (const answer of refused) {
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.headers.get('odata-version')).toBe('4.0');
      expect(answer.json).toEqual({ error: { code: '429', message: 'Too Many Requests' } });
    }
  }, 20_000);
});
