// Request counters in Redis, counted many at a time. Every count the limiters ask for in
// one turn of the event loop goes to Redis as one script call over all their keys: one
// command and one reply, however many requests are being counted. The library's own
// store sends a script call per request, and ioredis's work per command (a command
// object, its promise and timeout timer, its reply parsed) plus Redis's per call was
// most of what the shared quota cost a request (docs/benchmarks.md).
//
// Windows are fixed and aligned to the clock: a limiter's window of w ms that holds the
// time t is number floor(t / w), and each window counts under a key of its own. A count is
// then one INCR (and an expiry on the window's first): the count and the time the window
// has left, which every instance knows from its clock. (@fastify/rate-limit's RedisStore
// starts a window at a key's first request, and asks Redis for its time left on every
// count: half of the script's work.) A value under our key that is not a counter (never
// written by this script) is replaced by a new counter rather than failing the other
// requests of its call.
//
// A refund (a 304 gives its request back) is rare and goes as a call of its own.
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

type Incr = FastifyRateLimitStore['incr'];
type Callback = Parameters<Incr>[1];

interface Count {
  /** The counter: the limiter's key and the window's number. */
  key: string;
  /** How long the counter is kept, ms: its window's length, from its first count. */
  keepFor: number;
  /** When the window ends, ms since the epoch. */
  endsAt: number;
  callback: Callback;
}

// KEYS: the counters; ARGV[i]: how long to keep KEYS[i], ms. Returns the counts, in order.
// A counter outlives its window by less than a window, and no later window uses it.
const COUNT_SCRIPT = `
local counts = {}
for i, key in ipairs(KEYS) do
  local current = redis.pcall('INCR', key)
  if type(current) ~= 'number' then
    current = 1
    redis.call('SET', key, current, 'PX', ARGV[i])
  elseif current == 1 then
    redis.call('PEXPIRE', key, ARGV[i])
  end
  counts[i] = current
end
return counts`;

// Decrements the counter of the window running, never below zero.
const REFUND_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1])) or 0
if current > 0 then return redis.call('DECR', KEYS[1]) end
return current`;

// A bound on one call, so that a burst of thousands of requests in one turn does not
// become one script holding Redis (single-threaded) for all of them at once.
const MAX_KEYS_PER_CALL = 500;

type Counting = Redis & {
  compplanCount(...keysThenWindows: (string | number)[]): Promise<number[]>;
  compplanRefund(key: string): Promise<number>;
};

export class RedisCounters {
  private pending: Count[] = [];
  private readonly redis: Counting;

  /** `prefix` goes before every key (the client's own keyPrefix goes before that). */
  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    // ioredis sends it as EVALSHA, and as EVAL once per connection when Redis does not
    // know it yet (a new connection, a restarted Redis).
    redis.defineCommand('compplanCount', { lua: COUNT_SCRIPT });
    redis.defineCommand('compplanRefund', { lua: REFUND_SCRIPT, numberOfKeys: 1 });
    this.redis = redis as Counting;
  }

  /** Gives back one request counted against `key` in the window running. */
  async refund(key: string, timeWindow: number): Promise<void> {
    await this.redis.compplanRefund(this.counter(key, Math.floor(Date.now() / timeWindow)));
  }

  /**
   * Counts one request against `key` in the window of `timeWindow` ms running now; the
   * callback gets the count and the ms the window has left, or the call's error.
   */
  incr(key: string, callback: Callback, timeWindow: number): void {
    const window = Math.floor(Date.now() / timeWindow);
    this.pending.push({
      key: this.counter(key, window),
      keepFor: timeWindow,
      endsAt: (window + 1) * timeWindow,
      callback,
    });
    // The requests read in this turn of the event loop count together, in its check
    // phase (setImmediate): after every socket read of the turn has run its handlers.
    if (this.pending.length === 1) setImmediate(() => this.flush());
  }

  private counter(key: string, window: number): string {
    return `${this.prefix}${key}:${window}`;
  }

  private flush(): void {
    const counts = this.pending;
    this.pending = [];
    for (let start = 0; start < counts.length; start += MAX_KEYS_PER_CALL) {
      this.send(counts.slice(start, start + MAX_KEYS_PER_CALL));
    }
  }

  private send(counts: Count[]): void {
    const args: (string | number)[] = [counts.length];
    for (const count of counts) args.push(count.key);
    for (const count of counts) args.push(count.keepFor);
    this.redis.compplanCount(...args).then(
      (answers) => {
        const now = Date.now();
        counts.forEach((count, i) => {
          // At least 1 ms: the request counted in this window, even if it ended meanwhile.
          count.callback(null, {
            current: Number(answers[i]),
            ttl: Math.max(1, count.endsAt - now),
          });
        });
      },
      (error: Error) => {
        for (const count of counts) count.callback(error);
      },
    );
  }
}
