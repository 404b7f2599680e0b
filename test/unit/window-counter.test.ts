// A limit counted in fixed windows (src/rate-limit/window-counter.ts), in this process's
// counters: what giving back a request (a 304's) leaves, in the window it was counted in
// and after that window has ended. rate-limiter-flexible takes no clock: the window that
// must run on is a minute long, the one that must end is 100 ms and waited out for real.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { WindowCounter } from '../../src/rate-limit/window-counter.js';

const SHORT_WINDOW_MS = 100;
const counter = (windowMs: number) =>
  new WindowCounter({ name: 'test', points: 5, windowMs }, undefined);

describe('WindowCounter', () => {
  it('gives a request back to the window it was counted in', async () => {
    const limit = counter(60_000);
    await limit.take('key');
    expect((await limit.take('key')).remaining).toBe(3);
    const given = await limit.giveBack('key');
    expect(given).toMatchObject({ exceeded: false, remaining: 4 });
    expect(given.resetsInMs).toBeGreaterThan(0);
    expect((await limit.take('key')).remaining).toBe(3);
  });

  it('says the whole limit is left when that window has ended before the request is given back', async () => {
    const limit = counter(SHORT_WINDOW_MS);
    expect((await limit.take('key')).remaining).toBe(4);
    await sleep(SHORT_WINDOW_MS + 50);
    expect(await limit.giveBack('key')).toEqual({ exceeded: false, remaining: 5, resetsInMs: 0 });
    // Nothing was given to the next window: its first request leaves four.
    expect((await limit.take('key')).remaining).toBe(4);
  });
});
