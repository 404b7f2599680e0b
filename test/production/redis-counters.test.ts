// The shared quota's counters in a real Redis (src/rate-limit/redis-counters.ts): every
// count asked for in one turn of the event loop goes out as one script call, and each
// request still gets exactly its own count and the time its window (fixed, aligned to the
// clock, a counter of its own) has left. The quota
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

/** Waits, when a window of `windowMs` ends within 100 ms, for the next one to begin: the
 * counts of a test that expects one window then all fall in it. */
async function awayFromWindowEdge(windowMs = WINDOW_MS): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < 100) await new Promise((resolve) => setTimeout(resolve, left + 5));
}

/** The counters Redis holds for `key` (under the client's prefix and ours), one per window. */
async function countersOf(key: string): Promise<string[]> {
  return admin.keys(`compplan:${PREFIX}${key}:*`);
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
    await awayFromWindowEdge();
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
    // Stored under the client's prefix and ours and the window's number, kept for a window.
    const window = Math.floor(Date.now() / WINDOW_MS);
    const [counter, ...more] = await countersOf('key:k3');
    expect(more).toEqual([]);
    expect([window, window - 1].map((n) => `compplan:rate-limit:key:k3:${n}`)).toContain(counter);
    expect(await admin.get(counter ?? '')).toBe('5');
    const kept = await admin.pttl(counter ?? '');
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(WINDOW_MS);
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

  it('counts the next window under a counter of its own, from 1, with the time it has left', async () => {
    await awayFromWindowEdge(200);
    const first = await countAll(['key:w', 'key:w'], 200);
    expect(first.map((answer) => answer.current)).toEqual([1, 2]);
    const [firstCounter] = await countersOf('key:w');
    // Into the next window of 200 ms.
    await new Promise((resolve) => setTimeout(resolve, 200 - (Date.now() % 200) + 5));
    const [again] = await countAll(['key:w'], 200);
    expect(again?.current).toBe(1);
    expect(again?.ttl).toBeGreaterThan(0);
    expect(again?.ttl).toBeLessThanOrEqual(200 - 5);
    const later = (await countersOf('key:w')).filter((counter) => counter !== firstCounter);
    expect(later).toHaveLength(1);
  });

  it('gives each limiter its own window within one call (1 s and 10 s)', async () => {
    await awayFromWindowEdge(10_000);
    const before = Date.now();
    const [[quota], [failures]] = await Promise.all([
      countAll(['key:q'], 1_000),
      countAll(['auth-failure:127.0.0.1'], 10_000),
    ]);
    expect(await scriptCalls()).toBe(1);
    expect(quota?.current).toBe(1);
    expect(failures?.current).toBe(1);
    // The time left is the window's, as the clock places it.
    expect(quota?.ttl).toBeLessThanOrEqual(1_000 - (before % 1_000));
    expect(failures?.ttl).toBeLessThanOrEqual(10_000 - (before % 10_000));
    expect(failures?.ttl).toBeGreaterThan(10_000 - (before % 10_000) - 1_000);
    const kept = await admin.pttl((await countersOf('auth-failure:127.0.0.1'))[0] ?? '');
    expect(kept).toBeGreaterThan(9_000);
    expect(kept).toBeLessThanOrEqual(10_000);
  });

  it('replaces a value that is not a counter, without failing the other counts of the call', async () => {
    const window = Math.floor(Date.now() / WINDOW_MS);
    await admin.set(`compplan:rate-limit:key:garbage:${window}`, 'not a number');
    const answers = await countAll(['key:ok', 'key:garbage', 'key:ok']);
    expect(answers.map((answer) => answer.current)).toEqual([1, 1, 2]);
    const kept = await admin.pttl(`compplan:rate-limit:key:garbage:${window}`);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(WINDOW_MS);
  });

  it('gives back a request of the window running, never below zero', async () => {
    await countAll(['key:r', 'key:r', 'key:r']);
    await counters.refund('key:r', WINDOW_MS);
    expect((await countAll(['key:r']))[0]?.current).toBe(3);
    await counters.refund('key:nothing', WINDOW_MS);
    expect(await countersOf('key:nothing')).toEqual([]);
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
