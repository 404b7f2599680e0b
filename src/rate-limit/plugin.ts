// Request quotas, on @fastify/rate-limit's counters and stores:
// - per API key: RATE_LIMIT_PER_SECOND requests a second over every endpoint together,
//   in a window that refreshes every second (api.md section 8);
// - per client address, failed authentications only: 20 in 10 s, so that keys cannot be
//   guessed at speed, while a valid key is never blocked by it.
// The plugin's own hooks and headers are off (global: false): decisions.md fixes header
// names it does not send, so the quota is taken and the headers set here.
import rateLimit from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { RATE_LIMITED_MESSAGE } from '../errors.js';
import { type RateLimitStoreState, RedisLink } from './redis-link.js';
import { failoverStores } from './store.js';

const KEY_WINDOW_MS = 1_000;
export const AUTH_FAILURE_LIMIT = 20;
const AUTH_FAILURE_WINDOW_MS = 10_000;

/** What the library's limiter answers (the part read here). */
interface LimiterAnswer {
  isExceeded: boolean;
  ttlInSeconds: number;
}

export interface RateLimits {
  /**
   * Takes one request from the key's quota and sets the rate-limit headers. Returns false
   * after answering 429 when the quota is spent.
   */
  takeKeyQuota(request: FastifyRequest, reply: FastifyReply): Promise<boolean>;
  /**
   * Gives back the request that takeKeyQuota took, and corrects the headers: for an answer
   * that does not count, a 304 Not Modified (docs/api-behaviour.md).
   */
  refundKeyQuota(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /**
   * Counts a failed authentication. Returns the seconds until the client address may try
   * again when it is over its limit, else null.
   */
  recordAuthFailure(request: FastifyRequest): Promise<number | null>;
  /** Where counters live right now: in process, in Redis, or in process while Redis is down. */
  storeState(): RateLimitStoreState;
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits;
  }
}

export function sendTooManyRequests(reply: FastifyReply, retryAfterSeconds: number) {
  return reply
    .code(429)
    .header('retry-after', String(Math.max(1, retryAfterSeconds)))
    .type('application/json; charset=utf-8')
    .send({ message: RATE_LIMITED_MESSAGE, statusCode: 429 });
}

export default fp<{ config: Config }>(
  async (app, { config }) => {
    const link = config.redisUrl ? new RedisLink(config.redisUrl, app.log) : undefined;
    if (link) app.addHook('onClose', () => link.close());
    const { libraryStore, keyQuotaCounters } = failoverStores(link);
    await app.register(rateLimit, { global: false, store: libraryStore });

    const perSecond = config.rateLimitPerSecond;
    const policy = `"default";q=${perSecond};w=${KEY_WINDOW_MS / 1000}`;
    const limit = String(perSecond);
    // Both limits may count in one Redis: their keys are namespaced.
    const keyQuotaKey = (request: FastifyRequest) => `key:${request.apiKey?.id ?? ''}`;
    const authFailures = app.createRateLimit({
      max: AUTH_FAILURE_LIMIT,
      timeWindow: AUTH_FAILURE_WINDOW_MS,
      keyGenerator: (request) => `auth-failure:${request.ip}`,
    });

    app.decorate<RateLimits>('rateLimits', {
      // Counted in the store straight away, not through the library's createRateLimit
      // like the failed authentications: this runs on every API request, and the
      // limiter's layers around the store (its key generator and the store's callback
      // each awaited, a result object) were a measurable share of a /ping
      // (docs/benchmarks.md). The counting itself is still the stores'.
      takeKeyQuota(request, reply) {
        return new Promise((resolve, reject) => {
          keyQuotaCounters.incr(
            keyQuotaKey(request),
            (error, counted) => {
              if (!counted) return reject(error ?? new Error('the quota store counted nothing'));
              const remaining = Math.max(0, perSecond - counted.current);
              const resetsIn = Math.ceil(counted.ttl / 1000);
              reply.headers({
                'ratelimit-policy': policy,
                ratelimit: `"default";r=${remaining};t=${resetsIn}`,
                'x-ratelimit-limit': limit,
                'x-ratelimit-remaining': String(remaining),
                'x-ratelimit-reset': String(Math.ceil((Date.now() + counted.ttl) / 1000)),
              });
              if (counted.current <= perSecond) return resolve(true);
              sendTooManyRequests(reply, resetsIn).then(() => resolve(false), reject);
            },
            KEY_WINDOW_MS,
            perSecond,
          );
        });
      },
      async refundKeyQuota(request, reply) {
        await keyQuotaCounters.refund(keyQuotaKey(request), KEY_WINDOW_MS);
        const remaining = Math.min(perSecond, Number(reply.getHeader('x-ratelimit-remaining')) + 1);
        const ratelimit = String(reply.getHeader('ratelimit') ?? '');
        reply.headers({
          ratelimit: ratelimit.replace(/;r=\d+;/, `;r=${remaining};`),
          'x-ratelimit-remaining': String(remaining),
        });
      },
      async recordAuthFailure(request) {
        const failures = (await authFailures(request)) as LimiterAnswer;
        return failures.isExceeded ? failures.ttlInSeconds : null;
      },
      storeState: () => link?.state() ?? 'local',
    });
  },
  { name: 'rate-limit' },
);
