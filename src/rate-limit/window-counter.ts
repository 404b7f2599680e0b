// One limit counted in fixed windows (rate-limiter-flexible's counters): in Redis while
// it is usable, so that the limit holds across every instance, and in this process while
// it is not (or when no REDIS_URL is configured), so that Redis trouble never fails a
// request. A window starts at a name's first request and lasts `windowMs`.
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { RedisLink } from './redis-link.js';

export interface WindowCount {
  /** The request is over the limit. */
  exceeded: boolean;
  /** Requests left in the window. */
  remaining: number;
  /** Milliseconds until the window ends. */
  resetsInMs: number;
}

export interface WindowLimit {
  /** Namespaces the counters: several limits share one Redis. */
  name: string;
  points: number;
  windowMs: number;
}

const toCount = (result: RateLimiterRes, exceeded: boolean): WindowCount => ({
  exceeded,
  remaining: result.remainingPoints,
  resetsInMs: Math.max(0, result.msBeforeNext),
});

export class WindowCounter {
  private readonly local: RateLimiterMemory;
  private readonly shared: RateLimiterRedis | undefined;

  constructor(
    private readonly limit: WindowLimit,
    private readonly link: RedisLink | undefined,
  ) {
    const options = {
      points: limit.points,
      duration: limit.windowMs / 1000,
      keyPrefix: `rate-limit:${limit.name}`,
    };
    this.local = new RateLimiterMemory(options);
    this.shared = link && new RateLimiterRedis({ ...options, storeClient: link.client });
  }

  /** Counts one request for `name`. */
  take(name: string): Promise<WindowCount> {
    // Without Redis (the default), straight to this process's counters: one promise less
    // on every request.
    if (!this.shared) return consume(this.local, name);
    return this.inStore((limiter) => consume(limiter, name));
  }

  /**
   * Gives back one request counted in the window still running (an answer that does not
   * count: a 304 Not Modified), and says how the count now stands. When that window has
   * ended, there is nothing to give back and nothing counted: the whole limit is left.
   */
  giveBack(name: string): Promise<WindowCount> {
    return this.inStore((limiter) => giveBack(limiter, name, this.limit.points));
  }

  // Redis while it is usable; a command that fails marks it down and counts here instead.
  private async inStore<T>(count: (limiter: RateLimiterAbstract) => Promise<T>): Promise<T> {
    const shared = this.usableShared();
    if (shared) {
      try {
        return await count(shared);
      } catch (error) {
        this.link?.markDown(error as Error);
      }
    }
    return count(this.local);
  }

  private usableShared(): RateLimiterRedis | undefined {
    return this.shared && this.link?.usable() ? this.shared : undefined;
  }
}

async function consume(limiter: RateLimiterAbstract, name: string): Promise<WindowCount> {
  try {
    return toCount(await limiter.consume(name), false);
  } catch (rejection) {
    // Over the limit the library rejects with its result; anything else is a failure.
    if (rejection instanceof RateLimiterRes) return toCount(rejection, true);
    throw rejection;
  }
}

async function giveBack(
  limiter: RateLimiterAbstract,
  name: string,
  points: number,
): Promise<WindowCount> {
  const counted = await limiter.get(name);
  if (counted && counted.msBeforeNext > 0 && counted.consumedPoints > 0) {
    return toCount(await limiter.reward(name, 1), false);
  }
  // Nothing counted in a window that runs: the whole limit is left.
  return {
    exceeded: false,
    remaining: points,
    resetsInMs: Math.max(0, counted?.msBeforeNext ?? 0),
  };
}
