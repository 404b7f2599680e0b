// The shared quota's counters in a real Redis (src/rate-limit/redis-counters.ts): every
// count asked for in one turn of the event loop goes out as one script call, and each
// request still gets exactly its own count and the time its window has left. The quota
// as clients see it (10 a second, shared by instances, local while Redis is away) is
// tested through HTTP in faults.test.ts and multi-instance.test.ts.
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisCounters } from '../../src/rate-limit/redis-counters.js';
import { RedisLink } from '../../src/rate-limit/redis-link.js';
import { waitFor } from '../helpers/services/process.js';
import { type RedisServer, startRedis } from '../helpers/services/redis.js';

const PREFIX = 'rate-limit:';
const WINDOW_MS = 1_000;

interface Counted {
  current: number;
  ttl: number;
}

let redis: RedisServer;
let link: RedisLink;
let admin: Redis;
let counters: RedisCounters;

/** Asks for every count in `keys` in this one turn; resolves with each answer, in order. */
function countAll(keys: string[], windowMs = WINDOW_MS): Promise<Counted[]> {
  return Promise.all(
    keys.map(
      (key) =>
        new Promise<Counted>((resolve, reject) => {
          counters.incr(
            key,
            (error, result) => (error || !result ? reject(error) : resolve(result)),
            windowMs,
          );
        }),
    ),
  );
}

/** Script calls Redis has run since its statistics were reset (EVALSHA, and EVAL once). */
async function scriptCalls(): Promise<number> {
  const stats = await admin.info('commandstats');
  return [...stats.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url, { lazyConnect: true });
  await admin.connect();
  link = new RedisLink(redis.url, pino({ level: 'silent' }));
  await waitFor(async () => link.usable(), 5_000, 'the link to Redis to be ready');
  counters = new RedisCounters(link.client, PREFIX);
});

afterAll(async () => {
  await link?.close();
  admin?.disconnect();
  await redis?.stop();
});

describe('counting in Redis', () => {
  beforeEach(async () => {
    await admin.flushall();
    await admin.config('RESETSTAT');
  });

  it('counts the 50 requests of one turn (10 keys, 5 each) in one script call, each request its own count', async () => {
    const keys = Array.from({ length: 50 }, (_, i) => `key:k${i % 10}`);
    const answers = await countAll(keys);
    expect(await scriptCalls()).toBe(1);
    for (let k = 0; k < 10; k++) {
      expect(answers.filter((_, i) => i % 10 === k).map((answer) => answer.current)).toEqual([
        1, 2, 3, 4, 5,
      ]);
    }
    for (const answer of answers) {
      expect(answer.ttl).toBeGreaterThan(0);
      expect(answer.ttl).toBeLessThanOrEqual(WINDOW_MS);
    }
    // Stored under the client's prefix and ours, with the window as their expiry.
    expect(await admin.get('compplan:rate-limit:key:k3')).toBe('5');
    const left = await admin.pttl('compplan:rate-limit:key:k3');
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(WINDOW_MS);
  });

  it('sends the counts of separate turns in separate calls, continuing the same counters', async () => {
    await countAll(['key:a', 'key:b']);
    const second = await countAll(['key:a', 'key:b', 'key:a']);
    expect(second.map((answer) => answer.current)).toEqual([2, 2, 3]);
    expect(await scriptCalls()).toBe(2);
  });

  it('splits a turn of 1,200 counts into calls of at most 500', async () => {
    const answers = await countAll(Array.from({ length: 1_200 }, (_, i) => `key:burst${i}`));
    expect(answers.every((answer) => answer.current === 1)).toBe(true);
    expect(await scriptCalls()).toBe(3);
  });

  it('starts a new window once the last one has expired', async () => {
    expect((await countAll(['key:w', 'key:w'], 100)).map((answer) => answer.current)).toEqual([
      1, 2,
    ]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const [again] = await countAll(['key:w'], 100);
    expect(again).toEqual({ current: 1, ttl: 100 });
  });

  it('gives each limiter its own window within one call (1 s and 10 s)', async () => {
    const [quota, failures] = await Promise.all([
      countAll(['key:q'], 1_000),
      countAll(['auth-failure:127.0.0.1'], 10_000),
    ]);
    expect(quota).toEqual([{ current: 1, ttl: 1_000 }]);
    expect(failures).toEqual([{ current: 1, ttl: 10_000 }]);
    expect(await scriptCalls()).toBe(1);
  });

  it('gives a counter found without an expiry a window, and replaces a value that is not a counter, without failing the other counts of the call', async () => {
    await admin.set('compplan:rate-limit:key:forever', '7');
    await admin.set('compplan:rate-limit:key:garbage', 'not a number');
    const answers = await countAll(['key:ok', 'key:forever', 'key:garbage', 'key:ok']);
    expect(answers).toEqual([
      { current: 1, ttl: WINDOW_MS },
      { current: 8, ttl: WINDOW_MS },
      { current: 1, ttl: WINDOW_MS },
      expect.objectContaining({ current: 2 }),
    ]);
    for (const key of ['forever', 'garbage']) {
      const left = await admin.pttl(`compplan:rate-limit:key:${key}`);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(WINDOW_MS);
    }
  });

  it('gives back a request of the window still running, never below zero', async () => {
    await countAll(['key:r', 'key:r', 'key:r']);
    await counters.refund('key:r');
    expect((await countAll(['key:r']))[0]?.current).toBe(3);
    await counters.refund('key:nothing');
    expect(await admin.exists('compplan:rate-limit:key:nothing')).toBe(0);
  });
});

describe('with Redis gone', () => {
  it('hands every count of the call an error at once, and none an answer', async () => {
    await redis.stop();
    await waitFor(async () => !link.usable(), 5_000, 'the link to notice Redis is gone');
    const started = performance.now();
    const outcomes = await Promise.all(
      ['key:x', 'key:y', 'key:x'].map(
        (key) =>
          new Promise<string>((resolve) => {
            counters.incr(
              key,
              (error, result) => resolve(error ? 'error' : `counted ${result?.current}`),
              WINDOW_MS,
            );
          }),
      ),
    );
    expect(outcomes).toEqual(['error', 'error', 'error']);
    // Within the command timeout (250 ms): a request never waits on a Redis that is gone.
    expect(performance.now() - started).toBeLessThan(250);
  });
});
