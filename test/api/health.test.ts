// /healthz (liveness) and /readyz (readiness) for load balancers and orchestrators: no key,
// no rate limit, read-only like every other path. Runs once per database project.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, JSON_TYPE } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const READY = { status: 'ready', database: 'up', rateLimitStore: 'local' };

describe('health endpoints', () => {
  let server: TestServer;

  beforeAll(async () => {
    // A quota of 1 a second: any request the limiter counted would show at once.
    server = await startTestServer({ rateLimitPerSecond: 1 });
  });
  afterAll(() => server.close());

  it('GET /healthz answers 200 {"status":"ok"} as JSON without a key', async () => {
    const response = await server.request('/healthz', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await response.text()).toBe('{"status":"ok"}');
  });

  it('GET /readyz answers 200 with database "up" and rateLimitStore "local" (no REDIS_URL) without a key', async () => {
    const response = await server.request('/readyz', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await response.text()).toBe(JSON.stringify(READY));
  });

  it('ignores an x-api-key header that is invalid: health checks never answer 401', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await server.request(path, { key: 'cpk_not-a-real-key' });
      expect(response.status, path).toBe(200);
    }
  });

  it('is not rate limited: 30 requests to each within a second all answer 200, without rate-limit headers', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const responses = await Promise.all(
        Array.from({ length: 30 }, () => server.request(path, { key: null })),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(30).fill(200));
      for (const response of responses) {
        expect(response.headers.get('ratelimit')).toBeNull();
        expect(response.headers.get('x-ratelimit-remaining')).toBeNull();
      }
    }
  });

  it('does not count health checks against the per-address failed-authentication limit', async () => {
    // 25 keyless health checks, then one keyless API request: still a 401, not a 429.
    for (let i = 0; i < 25; i++) await server.request('/healthz', { key: null });
    const response = await server.request('/ping', { key: null });
    expect(response.status).toBe(401);
  });

  it('answers HEAD like GET, without a body', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await server.request(path, { key: null, method: 'HEAD' });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe(JSON_TYPE);
      expect(await response.text()).toBe('');
    }
  });

  it('answers POST with 405, Allow: GET, HEAD and the standard error body', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await server.request(path, { key: null, method: 'POST' });
      expect(response.status, path).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(response.headers.get('content-type')).toBe(JSON_TYPE);
      expect(await response.json()).toEqual(
        errorBody(path, 'Method POST is not allowed: this API is read-only (GET, HEAD)', 405),
      );
    }
  });
});
