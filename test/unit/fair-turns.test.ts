// Turns at the PostgreSQL pool (src/db/fair-turns.ts): requests beyond the pool's
// connections wait, and when a connection frees the next turn goes round robin between
// keys, each key's own requests in order. Over HTTP, parallel requests within the quota
// are all answered (test/api/rate-limit.test.ts).
import { describe, expect, it } from 'vitest';
import { BUSY_MESSAGE, type EndTurn, FairTurns } from '../../src/db/fair-turns.js';
import { ApiError } from '../../src/errors.js';

describe('fair turns', () => {
  it('starts at once while a connection is free', async () => {
    const turns = new FairTurns({ capacity: 2, maxWaitMs: 1_000 });
    const first = await turns.take('key_a');
    const second = await turns.take('key_a');
    expect(turns.queued).toBe(0);
    first();
    second();
  });

  it('gives freed turns round robin between keys, a key that asked for many waiting its turn behind the others', async () => {
    const turns = new FairTurns({ capacity: 1, maxWaitMs: 5_000 });
    const running = await turns.take('key_a');
    const started: string[] = [];
    const ends = new Map<string, EndTurn>();
    for (const [owner, name] of [
      ['key_a', 'a2'],
      ['key_a', 'a3'],
      ['key_a', 'a4'],
      ['key_b', 'b1'],
      ['key_c', 'c1'],
    ] as const) {
      void turns.take(owner).then((end) => {
        started.push(name);
        ends.set(name, end);
      });
    }
    expect(turns.queued).toBe(5);
    running();
    await settled();
    while (started.length < 5) {
      const last = started.at(-1) ?? '';
      expect(started.length, 'one turn at a time').toBe(ends.size);
      ends.get(last)?.();
      await settled();
    }
    expect(started).toEqual(['a2', 'b1', 'c1', 'a3', 'a4']);
    expect(turns.queued).toBe(0);
  });

  it('a request that gets no turn within maxWaitMs fails with 503 and leaves the queue', async () => {
    const turns = new FairTurns({ capacity: 1, maxWaitMs: 30 });
    const running = await turns.take('key_a');
    const refused = await turns.take('key_b').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ statusCode: 503, message: BUSY_MESSAGE });
    expect(turns.queued).toBe(0);
    running();
    // The freed connection is free: the next request starts at once.
    const next = await turns.take('key_b');
    next();
  });

  it('ending a turn twice frees one connection, not two', async () => {
    const turns = new FairTurns({ capacity: 1, maxWaitMs: 100 });
    const first = await turns.take('key_a');
    let secondStarted = false;
    let thirdStarted = false;
    void turns.take('key_b').then(() => {
      secondStarted = true;
    });
    const third = turns.take('key_c').then(() => {
      thirdStarted = true;
    });
    first();
    first();
    await settled();
    expect([secondStarted, thirdStarted]).toEqual([true, false]);
    // The third waits out its 100 ms and gives up.
    await expect(third).rejects.toMatchObject({ statusCode: 503 });
  });
});

const settled = () => new Promise((resolve) => setImmediate(resolve));
