// The rate-limit store handed to @fastify/rate-limit: Redis when it is usable, so that a
// key's quota holds across every instance, and the library's in-process store while it
// is not (or when no REDIS_URL is configured), so that Redis trouble never fails a
// request.
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import type { RedisLink } from './redis-link.js';

type Incr = FastifyRateLimitStore['incr'];
type ChildOptions = Parameters<FastifyRateLimitStore['child']>[0];

// Counters kept in process, per limiter: more keys than this and the least recently
// used ones restart their window (which only ever lets a request through, never blocks).
const LOCAL_CACHE_ENTRIES = 50_000;

class FailoverStore implements FastifyRateLimitStore {
  constructor(
    private readonly local: FastifyRateLimitStore,
    private readonly shared: FastifyRateLimitStore | undefined,
    private readonly link: RedisLink | undefined,
  ) {}

  incr(...[key, callback, timeWindow, max]: Parameters<Incr>): void {
    const { shared, link } = this;
    if (!shared || !link?.usable()) {
      this.local.incr(key, callback, timeWindow, max);
      return;
    }
    shared.incr(
      key,
      (error, result) => {
        if (!error) return callback(null, result);
        link.markDown(error);
        this.local.incr(key, callback, timeWindow, max);
      },
      timeWindow,
      max,
    );
  }

  // Each limiter gets counters of its own in process. In Redis they share one key
  // namespace: the limiters' key generators already namespace their keys.
  child(_options: ChildOptions): FastifyRateLimitStore {
    return new FailoverStore(
      new LocalStore(false, false, LOCAL_CACHE_ENTRIES),
      this.shared,
      this.link,
    );
  }
}

/** A store class for @fastify/rate-limit's `store` option. */
export function failoverStore(link: RedisLink | undefined) {
  return class extends FailoverStore {
    constructor() {
      super(
        new LocalStore(false, false, LOCAL_CACHE_ENTRIES),
        link && new RedisStore(false, false, link.client, 'rate-limit:'),
        link,
      );
    }
  };
}
