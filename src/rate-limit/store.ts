// Where the limits count: Redis when it is usable, so that a key's quota holds across
// every instance, and @fastify/rate-limit's in-process store while it is not (or when no
// REDIS_URL is configured), so that Redis trouble never fails a request. The key quota
// counts in one directly (keyQuotaCounters); the failed-authentication limit goes through
// the library's limiter, which is handed the store class (failoverStores).
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import { RedisCounters } from './redis-counters.js';
import type { RedisLink } from './redis-link.js';

type Incr = FastifyRateLimitStore['incr'];
type ChildOptions = Parameters<FastifyRateLimitStore['child']>[0];

// Counters kept in process, per limiter: more keys than this and the least recently
// used ones restart their window (which only ever lets a request through, never blocks).
const LOCAL_CACHE_ENTRIES = 50_000;
const localCounters = () => new LocalStore(false, false, LOCAL_CACHE_ENTRIES);

class FailoverStore implements FastifyRateLimitStore {
  constructor(
    private readonly local: FastifyRateLimitStore,
    private readonly shared: RedisCounters | undefined,
    private readonly link: RedisLink | undefined,
  ) {}

  incr(...[key, callback, timeWindow, max]: Parameters<Incr>): void {
    const { shared, link } = this;
    if (!shared || !link?.usable()) {
      this.incrLocal(key, callback, timeWindow, max);
      return;
    }
    shared.incr(
      key,
      (error, result) => {
        if (!error) return callback(null, result);
        link.markDown(error);
        this.incrLocal(key, callback, timeWindow, max);
      },
      timeWindow,
    );
  }

  // The library's local store hands out its live counter object, which later increments
  // change. The limiter reads it after an await, so simultaneous requests would all see
  // the final count (a burst of 11 against a quota of 10: 11 refusals). A copy is what
  // this request counted.
  private incrLocal(...[key, callback, timeWindow, max]: Parameters<Incr>): void {
    this.local.incr(
      key,
      (error, result) => callback(error, result && { current: result.current, ttl: result.ttl }),
      timeWindow,
      max,
    );
  }

  /**
   * Gives back one request that `incr` counted in the window still running (a 304 Not
   * Modified is not counted: docs/api-behaviour.md). Never below zero; a window that has
   * ended has nothing to give back.
   */
  async refund(key: string, timeWindow: number): Promise<void> {
    const { link } = this;
    if (this.shared && link?.usable()) {
      try {
        await this.shared.refund(key);
        return;
      } catch (error) {
        link.markDown(error as Error);
      }
    }
    // The library's local store keeps { current, iterationStartMs } per key in `lru`.
    const counter = (this.local as unknown as LocalCounters).lru.get(key);
    if (counter && counter.current > 0 && counter.iterationStartMs + timeWindow > Date.now()) {
      counter.current -= 1;
    }
  }

  // Each limiter gets counters of its own in process. In Redis they share one key
  // namespace: the limiters' keys are namespaced (rate-limit/plugin.ts).
  child(_options: ChildOptions): FastifyRateLimitStore {
    return new FailoverStore(localCounters(), this.shared, this.link);
  }
}

interface LocalCounters {
  lru: { get(key: string): { current: number; iterationStartMs: number } | undefined };
}

// Where a counter is kept in Redis (after the client's `compplan:`).
const REDIS_KEY_PREFIX = 'rate-limit:';

/**
 * A store class for @fastify/rate-limit's `store` option, and the key quota's counters:
 * in process, counters of their own; in Redis, one batch of counts for both.
 */
export function failoverStores(link: RedisLink | undefined) {
  const shared = link && new RedisCounters(link.client, REDIS_KEY_PREFIX);
  return {
    libraryStore: class extends FailoverStore {
      constructor() {
        super(localCounters(), shared, link);
      }
    },
    keyQuotaCounters: new FailoverStore(localCounters(), shared, link),
  };
}
