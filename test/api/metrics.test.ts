// Prometheus metrics (prom-client): request counts and durations by route pattern, rate
// limiting, failed authentication, the rate-limit store and, on PostgreSQL, the pool.
// Served by `compplan serve` on METRICS_PORT, never on the API port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { cyclePath, errorBody, MERIT_CYCLES } from '../helpers/api-expectations.js';
import { type CliServer, startCliServer, stopAllProcesses } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const UNKNOWN_CYCLE = 'mc_00000000-0000-4000-8000-000000000000';
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** The sample lines (no # HELP / # TYPE) of a metric family, exactly as exported. */
function samples(text: string, name: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

const requestsLine = (route: string, status: number, count: number) =>
  `compplan_http_requests_total{method="GET",route="${route}",status_code="${status}"} ${count}`;

describe('metrics of the app', () => {
  let server: TestServer;
  let text: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()], rateLimitPerSecond: 5 });
    const key = await server.createKey(ACME);
    const statuses: number[] = [];
    const get = async (path: string, requestKey: string | null) => {
      statuses.push((await server.request(path, { key: requestKey })).status);
    };
    await get('/ping', key);
    await get(cyclePath(CYCLE.annual2025), key);
    await get(cyclePath(UNKNOWN_CYCLE), key);
    await get(`${MERIT_CYCLES}?limit=101`, key);
    await get('/ping', null);
    await get('/ping', 'cpk_not-a-real-key');
    await get('/no/such/path', null);
    // A fresh key with a quota of 5: six at once, the sixth is limited.
    const second = await server.createKey(ACME, 'second');
    await Promise.all(Array.from({ length: 6 }, () => get('/ping', second)));
    expect(statuses.sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 401, 401, 404, 404, 422, 429,
    ]);
    text = await server.app.metrics.registry.metrics();
  });
  afterAll(() => server.close());

  it('counts requests by method, route pattern and status code', () => {
    expect(samples(text, 'compplan_http_requests_total').sort()).toEqual(
      [
        requestsLine('/ping', 200, 6),
        requestsLine('/ping', 401, 2),
        requestsLine('/ping', 429, 1),
        requestsLine('/v1/compensationPlanning/meritCycles/:id', 200, 1),
        requestsLine('/v1/compensationPlanning/meritCycles/:id', 404, 1),
        requestsLine('/v1/compensationPlanning/meritCycles', 422, 1),
        requestsLine('unmatched', 404, 1),
      ].sort(),
    );
  });

  it('never puts a concrete id or unmatched path into a label', () => {
    expect(text).not.toContain(CYCLE.annual2025);
    expect(text).not.toContain(UNKNOWN_CYCLE);
    expect(text).not.toContain('/no/such/path');
    expect(text).not.toContain('limit=101');
  });

  it('records request durations in a histogram with the same labels', () => {
    const labels =
      'method="GET",route="/v1/compensationPlanning/meritCycles/:id",status_code="404"';
    const buckets = samples(text, 'compplan_http_request_duration_seconds_bucket').filter((line) =>
      line.includes(labels),
    );
    expect(buckets.map((line) => /le="([^"]+)"/.exec(line)?.[1])).toEqual([
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '+Inf',
    ]);
    expect(buckets.at(-1)).toBe(
      `compplan_http_request_duration_seconds_bucket{le="+Inf",${labels}} 1`,
    );
    expect(samples(text, 'compplan_http_request_duration_seconds_count')).toContain(
      `compplan_http_request_duration_seconds_count{${labels}} 1`,
    );
  });

  it('counts 429s of the per-key quota and failed authentications', () => {
    expect(samples(text, 'compplan_rate_limited_total')).toEqual([
      'compplan_rate_limited_total{limit="key"} 1',
    ]);
    expect(samples(text, 'compplan_auth_failures_total')).toEqual([
      'compplan_auth_failures_total 2',
    ]);
  });

  it('reports the rate-limit store as local when no REDIS_URL is configured', () => {
    expect(samples(text, 'compplan_rate_limit_store')).toEqual([
      'compplan_rate_limit_store{state="local"} 1',
      'compplan_rate_limit_store{state="redis"} 0',
      'compplan_rate_limit_store{state="local-fallback"} 0',
    ]);
  });

  it('reports the PostgreSQL pool (total, idle, waiting) on PostgreSQL and nothing on SQLite', () => {
    const pool = samples(text, 'compplan_db_pool_connections');
    if (testDialect() === 'sqlite') {
      expect(pool).toEqual([]);
      return;
    }
    expect(pool).toHaveLength(3);
    expect(pool[0]).toMatch(/^compplan_db_pool_connections\{state="total"\} [1-9]\d*$/);
    expect(pool[1]).toMatch(/^compplan_db_pool_connections\{state="idle"\} [1-9]\d*$/);
    expect(pool[2]).toBe('compplan_db_pool_connections{state="waiting"} 0');
  });

  it('includes the process metrics under the compplan_ prefix', () => {
    expect(samples(text, 'compplan_process_cpu_user_seconds_total')).toHaveLength(1);
    expect(samples(text, 'compplan_nodejs_heap_size_used_bytes')).toHaveLength(1);
  });
});

describe('compplan serve with METRICS_PORT', () => {
  let database: TestDatabase;
  // Start-up is in beforeAll; should it fail, every test below fails with its cause
  // (rather than being skipped, as tests of a failed beforeAll are).
  let startup: Promise<{ server: CliServer; metricsUrl: string }>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const { config } = database;
    startup = startCliServer([], {
      DATABASE_URL: config.dialect === 'sqlite' ? `sqlite:${config.path}` : config.url,
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
    }).then((server) => {
      const printed = /^Prometheus metrics: (\S+)$/m.exec(server.stderr());
      return { server, metricsUrl: printed?.[1] ?? '' };
    });
    startup.catch(() => undefined);
  });
  afterAll(async () => {
    await stopAllProcesses();
    await database.drop();
  });

  it('starts and prints the metrics URL on standard error: its own loopback port, path /metrics', async () => {
    const { server, metricsUrl } = await startup;
    expect(server.stderr()).toBe(
      `compplan is listening on ${server.url}\nPrometheus metrics: ${metricsUrl}\n\n`,
    );
    const api = new URL(server.url);
    const metrics = new URL(metricsUrl);
    expect(metrics.hostname).toBe('127.0.0.1');
    expect(metrics.pathname).toBe('/metrics');
    expect(Number(metrics.port)).toBeGreaterThan(0);
    expect(metrics.port).not.toBe(api.port);
  });

  it('serves the Prometheus text format without a key, counting the API port requests', async () => {
    const { server, metricsUrl } = await startup;
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/ping`)).status).toBe(401);
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
    const text = await response.text();
    expect(samples(text, 'compplan_http_requests_total').sort()).toEqual(
      [requestsLine('/healthz', 200, 1), requestsLine('/ping', 401, 1)].sort(),
    );
    expect(samples(text, 'compplan_auth_failures_total')).toEqual([
      'compplan_auth_failures_total 1',
    ]);
    expect(samples(text, 'compplan_rate_limit_store')).toContain(
      'compplan_rate_limit_store{state="local"} 1',
    );
  });

  it('answers 404 for any other path on the metrics port', async () => {
    const { metricsUrl } = await startup;
    const response = await fetch(new URL('/', metricsUrl));
    expect(response.status).toBe(404);
    expect(await response.text()).toBe('Not found: scrape /metrics\n');
  });

  it('does not serve /metrics on the API port: 404 with the standard error body', async () => {
    const { server } = await startup;
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(
      errorBody('/metrics', 'Route GET /metrics not found', 404),
    );
  });

  it('closes the metrics port with the API on SIGTERM and exits 0', async () => {
    const { server, metricsUrl } = await startup;
    expect(await server.stop()).toEqual({ code: 0, signal: null, killed: false });
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});
