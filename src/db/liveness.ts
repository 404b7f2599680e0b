// Whether PostgreSQL still answers, for work whose statements may rightly run long (an
// import's merge, a migration): such a statement has no bound of its own, so while one has
// been running for a while the server is asked `select 1` on a connection of its own.
// When that gets no answer in time, the server is not answering (frozen, cut off): the
// connections of the statements still running are closed, and each fails with
// DatabaseNotAnswering. The work's transaction is then never committed. Bounds and the
// time this takes: src/db/timeouts.ts.
import type pg from 'pg';

/** Resolves true when the server answered, or said why it will not (refused, shutting
 * down): the work's own connections see that themselves; false when it did not answer. */
export type Probe = () => Promise<boolean>;

interface Running {
  since: number;
  statements: number;
}

export class LivenessWatch {
  private readonly running = new Map<pg.PoolClient, Running>();
  private readonly lost = new WeakSet<pg.PoolClient>();
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  /** `everyMs`: how long a statement runs before the server is asked, and how often. */
  constructor(
    private readonly probe: Probe,
    private readonly everyMs: number,
  ) {}

  /** A statement was sent on `client`; call the returned function once it has its answer. */
  started(client: pg.PoolClient): () => void {
    const running = this.running.get(client);
    if (running) running.statements++;
    else this.running.set(client, { since: performance.now(), statements: 1 });
    if (!this.timer) {
      this.timer = setInterval(() => this.check(), this.everyMs);
      this.timer.unref();
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const entry = this.running.get(client);
      if (entry && --entry.statements === 0) this.running.delete(client);
      if (this.running.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Whether `client` was closed because the server stopped answering. */
  closed(client: pg.PoolClient): boolean {
    return this.lost.has(client);
  }

  private check(): void {
    if (this.probing) return;
    const now = performance.now();
    const overdue = [...this.running.values()].some((entry) => now - entry.since >= this.everyMs);
    if (!overdue) return;
    this.probing = true;
    this.probe()
      .then((answered) => {
        if (!answered) this.closeRunning();
      })
      .finally(() => {
        this.probing = false;
      });
  }

  private closeRunning(): void {
    for (const client of this.running.keys()) {
      this.lost.add(client);
      // With a statement in flight, end() destroys the socket at once (node-postgres does
      // not wait for an answer that may never come); the statement fails.
      client.end().catch(() => undefined);
    }
  }
}

/** `select 1` on a new connection, within `connectMs` to connect and `queryMs` to answer. */
export function probeServer(
  Client: typeof pg.Client,
  url: string,
  bounds: { connectMs: number; queryMs: number },
): Probe {
  return async () => {
    const client = new Client({
      connectionString: url,
      connectionTimeoutMillis: bounds.connectMs,
      query_timeout: bounds.queryMs,
      application_name: 'compplan liveness',
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (error) {
      // node-postgres's own timeouts: connecting, or the answer to `select 1`.
      return !/timeout/i.test((error as Error).message);
    } finally {
      client.end().catch(() => undefined);
    }
  };
}
