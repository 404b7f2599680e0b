// Turns at the PostgreSQL connection pool, shared fairly between API keys
// (docs/operations.md, "Connection pool"). The pool has a few connections; requests beyond
// them wait here instead of in the pool's own first-come queue, so that one key that sends
// many requests at once (a report refreshing its cycles in parallel) delays itself, not
// every other organisation: when a connection frees, the next turn goes to the key that
// has waited longest for one, round robin, and a key's own requests keep their order.
//
// Nothing is refused while the server keeps up: the quota decides how many requests a key
// may make. A request that could not get a turn within `maxWaitMs` (the database far
// behind) fails with 503 and Retry-After, as the pool's own timeout would.
import { ApiError } from '../errors.js';

export interface FairTurnsOptions {
  /** Turns at once: the pool's connections. */
  capacity: number;
  /** How long a request may wait for a turn. */
  maxWaitMs: number;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

/** Ends a turn; calling it again does nothing. */
export type EndTurn = () => void;

export const BUSY_MESSAGE = 'Service Unavailable: the database is busy; retry shortly';

export class FairTurns {
  private running = 0;
  /** Waiting requests by key; the Map's order is the round robin's. */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(private readonly options: FairTurnsOptions) {}

  /** Resolves when `owner` may use a connection; call the returned function when done. */
  take(owner: string): Promise<EndTurn> {
    if (this.running < this.options.capacity && this.waiting.size === 0) {
      this.running++;
      return Promise.resolve(this.endTurn());
    }
    return new Promise<EndTurn>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => resolve(this.endTurn()),
        timer: setTimeout(() => {
          this.forget(owner, waiter);
          reject(new ApiError(503, BUSY_MESSAGE));
        }, this.options.maxWaitMs),
      };
      const queue = this.waiting.get(owner);
      if (queue) queue.push(waiter);
      else this.waiting.set(owner, [waiter]);
    });
  }

  /** Requests waiting for a turn (metrics). */
  get queued(): number {
    let count = 0;
    for (const queue of this.waiting.values()) count += queue.length;
    return count;
  }

  private endTurn(): EndTurn {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.running--;
      this.next();
    };
  }

  private next(): void {
    const first = this.waiting.entries().next();
    if (first.done) return;
    const [owner, queue] = first.value;
    const waiter = queue.shift() as Waiter;
    // The key goes to the back of the round; with nothing left it leaves it.
    this.waiting.delete(owner);
    if (queue.length > 0) this.waiting.set(owner, queue);
    clearTimeout(waiter.timer);
    this.running++;
    waiter.start();
  }

  private forget(owner: string, waiter: Waiter): void {
    const queue = this.waiting.get(owner);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at !== -1) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(owner);
  }
}
