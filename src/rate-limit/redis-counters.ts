// Request counters in Redis, counted many at a time. Every count the limiters ask for in
// one turn of the event loop goes to Redis as one script call over all their keys: one
// command and one reply, however many requests are being counted. The library's own
// store sends a script call per request, and ioredis's work per command (a command
// object, its promise and timeout timer, its reply parsed) plus Redis's per call was
// most of what the shared quota cost a request (docs/benchmarks.md).
//
// The counting is the library's (@fastify/rate-limit's RedisStore, neither
// continueExceeding nor exponential backoff): the first request of a window starts it,
// each request adds one, and the answer is the count and the milliseconds the window has
// left. Two differences, both for values this script never writes, so that one bad key
// cannot fail the other requests of its call: a counter found without an expiry is
// given the window as its expiry rather than counting forever, and a value that is not
// a counter is replaced by a new one.
//
// A refund (a 304 gives its request back) is rare and goes as a call of its own.
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

type Incr = FastifyRateLimitStore['incr'];
type Callback = Parameters<Incr>[1];

interface Count {
  key: string;
  timeWindow: number;
  callback: Callback;
}

// KEYS: the counters; ARGV[i]: the window of KEYS[i] in ms. Returns count, ms left, … .
const COUNT_SCRIPT = `
local answers = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[i])
  local current = redis.pcall('INCR', key)
  local left = -1
  if type(current) ~= 'number' then
    current = 1
    redis.call('SET', key, current)
  elseif current > 1 then
    left = redis.call('PTTL', key)
  end
  if left < 0 then
    left = window
    redis.call('PEXPIRE', key, left)
  end
  answers[2 * i - 1] = current
  answers[2 * i] = left
end
return answers`;

// Decrement only a counter of a window still running, and never below zero.
const REFUND_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current > 0 and redis.call('PTTL', KEYS[1]) > 0 then return redis.call('DECR', KEYS[1]) end
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

  /** Gives back one request counted against `key` in its window still running. */
  async refund(key: string): Promise<void> {
    await this.redis.compplanRefund(`${this.prefix}${key}`);
  }

  /** Counts one request against `key`; the callback gets the count or the call's error. */
  incr(key: string, callback: Callback, timeWindow: number): void {
    this.pending.push({ key: `${this.prefix}${key}`, timeWindow, callback });
    // The requests read in this turn of the event loop count together, in its check
    // phase (setImmediate): after every socket read of the turn has run its handlers.
    if (this.pending.length === 1) setImmediate(() => this.flush());
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
    for (const count of counts) args.push(count.timeWindow);
    this.redis.compplanCount(...args).then(
      (answers) => {
        counts.forEach((count, i) => {
          count.callback(null, {
            current: Number(answers[2 * i]),
            ttl: Number(answers[2 * i + 1]),
          });
        });
      },
      (error: Error) => {
        for (const count of counts) count.callback(error);
      },
    );
  }
}
