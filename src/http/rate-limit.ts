// Request quotas (docs/api-behaviour.md, "Rate limits"):
// - per API key: RATE_LIMIT_PER_SECOND requests a second over every endpoint together,
//   in a window that refreshes every second;
// - per client address, failed authentications only: 20 in 10 s, so that keys cannot be
//   guessed at speed, while a valid key is never blocked by it.
// Both count in Redis when REDIS_URL names one (window-counter.ts). The pipeline
// (src/http/pipeline.ts) takes the quota, and writes its headers once the answer is known.
import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { RATE_LIMITED_MESSAGE } from '../errors.js';
import { DownloadSlots } from '../rate-limit/download-slots.js';
import { type RateLimitStoreState, RedisLink } from '../rate-limit/redis-link.js';
import { type WindowCount, WindowCounter, type WindowLimit } from '../rate-limit/window-counter.js';
import { isFeedRequest, odataErrorBody } from './odata-errors.js';

const KEY_WINDOW_MS = 1_000;
export const AUTH_FAILURE_LIMIT = 20;
const AUTH_FAILURE_WINDOW_MS = 10_000;

/** A key's quota as its answer reports it. */
export type Quota = WindowCount;

export interface RateLimits {
  /** Takes one request from the key's quota. */
  takeKeyQuota(keyId: string): Promise<Quota>;
  /**
   * Gives back the request takeKeyQuota took; the quota as it now stands (the whole of it
   * when the window the request was counted in has ended meanwhile).
   */
  refundKeyQuota(keyId: string): Promise<Quota>;
  /**
   * Counts a failed authentication from a client address. Returns the seconds until it
   * may try again when it is over its limit, else null.
   */
  recordAuthFailure(address: string): Promise<number | null>;
  /** Sets the rate-limit headers of an answer counted with this quota. */
  label(reply: FastifyReply, quota: Quota): void;
  /** A limit of another kind (the web application's sign-in), in the same stores. */
  counter(limit: WindowLimit): WindowCounter;
  /** Where counters live right now: in process, in Redis, or in process while Redis is down. */
  storeState(): RateLimitStoreState;
  /** One bulk download per key at a time, in the same stores (download-slots.ts). */
  downloads: DownloadSlots;
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits;
  }
}

const secondsUntil = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function sendTooManyRequests(reply: FastifyReply, retryAfterSeconds: number) {
  reply
    .code(429)
    .header('retry-after', String(Math.max(1, retryAfterSeconds)))
    .type('application/json; charset=utf-8');
  // The OData feed answers its errors in OData's form (docs/odata.md, "Errors").
  return reply.send(
    isFeedRequest(reply.request)
      ? odataErrorBody(429, RATE_LIMITED_MESSAGE)
      : { message: RATE_LIMITED_MESSAGE, statusCode: 429 },
  );
}

/** The 429 of a spent quota: Retry-After is when its window refreshes. */
export const sendQuotaSpent = (reply: FastifyReply, quota: Quota) =>
  sendTooManyRequests(reply, secondsUntil(quota.resetsInMs));

export default fp<{ config: Config }>(
  async (app, { config }) => {
    const link = config.redisUrl ? new RedisLink(config.redisUrl, app.log) : undefined;
    if (link) app.addHook('onClose', () => link.close());
    const perSecond = config.rateLimitPerSecond;
    const keyQuota = new WindowCounter(
      { name: 'key', points: perSecond, windowMs: KEY_WINDOW_MS },
      link,
    );
    const authFailures = new WindowCounter(
      { name: 'auth-failure', points: AUTH_FAILURE_LIMIT, windowMs: AUTH_FAILURE_WINDOW_MS },
      link,
    );
    const policy = `"default";q=${perSecond};w=${KEY_WINDOW_MS / 1000}`;
    const limit = String(perSecond);

    app.decorate<RateLimits>('rateLimits', {
      takeKeyQuota: (keyId) => keyQuota.take(keyId),
      refundKeyQuota: (keyId) => keyQuota.giveBack(keyId),
      async recordAuthFailure(address) {
        const failures = await authFailures.take(address);
        return failures.exceeded ? secondsUntil(failures.resetsInMs) : null;
      },
      label(reply, quota) {
        const resetsIn = Math.ceil(quota.resetsInMs / 1000);
        reply
          .header('ratelimit-policy', policy)
          .header('ratelimit', `"default";r=${quota.remaining};t=${resetsIn}`)
          .header('x-ratelimit-limit', limit)
          .header('x-ratelimit-remaining', String(quota.remaining))
          .header('x-ratelimit-reset', String(Math.ceil((Date.now() + quota.resetsInMs) / 1000)));
      },
      counter: (limit) => new WindowCounter(limit, link),
      storeState: () => link?.state() ?? 'local',
      downloads: new DownloadSlots(link),
    });
  },
  { name: 'rate-limit' },
);
