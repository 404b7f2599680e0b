// Prometheus metrics (prom-client), one registry per app so that several apps in one
// process (tests) keep separate figures. server.ts serves them on METRICS_PORT, away
// from the API port, so that they need no key and are not exposed with the API.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { routeConfigOf } from '../http/route-config.js';
import type { RateLimitStoreState } from '../rate-limit/redis-link.js';

export interface Metrics {
  readonly registry: Registry;
  readonly rateLimited: Counter<'limit'>;
  readonly authFailures: Counter;
  readonly responseCache: Counter<'result'>;
  readonly apiKeyLookups: Counter;
  /** Counts an answered request and its duration (the pipeline's record step). */
  observeRequest(request: FastifyRequest, reply: FastifyReply): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

const STORE_STATES: RateLimitStoreState[] = ['local', 'redis', 'local-fallback'];

export default fp(
  async (app) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'compplan_' });

    const labelNames = ['method', 'route', 'status_code'] as const;
    const requests = new Counter({
      name: 'compplan_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames,
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'compplan_http_request_duration_seconds',
      help: 'Time from receiving a request to sending its response.',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    const rateLimited = new Counter({
      name: 'compplan_rate_limited_total',
      help: 'Requests answered 429, by the limit they met: key (per-second quota) or auth-failure (per address).',
      labelNames: ['limit'] as const,
      registers: [registry],
    });
    const authFailures = new Counter({
      name: 'compplan_auth_failures_total',
      help: 'Requests with a missing, malformed, unknown or revoked API key.',
      registers: [registry],
    });
    const apiKeyLookups = new Counter({
      name: 'compplan_api_key_lookups_total',
      help: 'API keys looked up in the database: the first request with a key, and the first after any key was revoked or changed (answers are kept while the database confirms, once a second, that no key changed).',
      registers: [registry],
    });
    const responseCache = new Counter({
      name: 'compplan_response_cache_total',
      help: 'GET requests of cacheable routes, by whether a kept answer was sent (hit), one was built (miss), or the cache could not be used because the database could not tell this server of imports (off).',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    new Gauge({
      name: 'compplan_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting clients).',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = app.database.poolStats?.();
        if (!stats) return;
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
    new Gauge({
      name: 'compplan_rate_limit_store',
      help: 'Where rate-limit counters live: 1 for the current state (local, redis, local-fallback).',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const current = app.rateLimits.storeState();
        for (const state of STORE_STATES) this.set({ state }, state === current ? 1 : 0);
      },
    });

    // Each series's counters, found once: routes × methods × statuses are a few hundred.
    const seriesByName = new Map<
      string,
      {
        requests: ReturnType<typeof requests.labels>;
        duration: ReturnType<typeof duration.labels>;
      }
    >();

    app.decorate<Metrics>('metrics', {
      registry,
      rateLimited,
      authFailures,
      responseCache,
      apiKeyLookups,
      observeRequest(request, reply) {
        // The route pattern, never the raw URL: ids in paths would make a series per object.
        const method = request.method;
        // is404 and the route's config, not routeOptions: that getter builds a new object.
        const route = request.is404 ? 'unmatched' : (routeConfigOf(request).url ?? 'unmatched');
        const status = reply.statusCode;
        const name = `${method} ${route} ${status}`;
        let series = seriesByName.get(name);
        if (series === undefined) {
          const labels = { method, route, status_code: String(status) };
          series = { requests: requests.labels(labels), duration: duration.labels(labels) };
          seriesByName.set(name, series);
        }
        series.requests.inc();
        series.duration.observe(reply.elapsedTime / 1000);
      },
    });
  },
  { name: 'metrics', dependencies: ['database'] },
);
