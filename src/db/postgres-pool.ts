// The PostgreSQL pools as Kysely uses them (src/db/connect.ts opens them). On top of
// node-postgres's pool, every statement is sent through one wrapper per connection, which
//  - sends a read whose text has been seen as a named prepared statement (statement-cache.ts);
//  - bounds how long the statement may go unanswered: node-postgres's own per-statement
//    `query_timeout` (for a bulk download's COPY, a timer of the same length), or, for
//    long work, the liveness watch (liveness.ts);
//  - when the server did not answer, fails the statement and every later one on that
//    connection with DatabaseNotAnswering at once (a transaction's rollback does not wait
//    a second time), and hands the connection back to the pool as broken, so that the pool
//    closes it instead of giving it to the next request. A statement that went unanswered
//    is still outstanding on its connection: anything sent after it would wait behind it.
import type { Readable } from 'node:stream';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { DatabaseNotAnswering } from './errors.js';
import type { LivenessWatch } from './liveness.js';

export interface StatementGuard {
  /** The name of a prepared statement for this text, or undefined to send it unnamed. */
  nameOf(text: string): string | undefined;
  /** node-postgres's query_timeout for each statement; undefined: none (see `watch`). */
  queryTimeoutMs?: number;
  /** Watches statements without a bound of their own. */
  watch?: LivenessWatch;
}

// node-postgres's error when query_timeout passes.
const READ_TIMEOUT = 'Query read timeout';

/** Kysely's view of `connect()`'s pool; `end` ends what the view owns. */
export function guardedPool(
  connect: () => Promise<pg.PoolClient>,
  end: () => Promise<void>,
  guard: StatementGuard,
): PostgresPool {
  // Kysely keeps one connection object per client, found by identity: one wrapper each.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let wrapper = wrappers.get(client);
    if (wrapper) return wrapper;
    let broken: DatabaseNotAnswering | undefined;
    // A bulk download's COPY (postgres-copy.ts), the one query that is not SQL text:
    // node-postgres answers with the COPY's stream, which fails, and leaves the connection
    // broken, when it has not ended within the statement's bound.
    const boundedCopy = (copy: pg.Submittable): Readable => {
      const stream = client.query(copy) as unknown as Readable;
      const boundMs = guard.queryTimeoutMs;
      if (boundMs === undefined) return stream;
      const started = performance.now();
      const timer = setTimeout(() => {
        broken ??= new DatabaseNotAnswering(Math.round(performance.now() - started));
        stream.destroy(broken);
      }, boundMs);
      for (const end of ['end', 'error', 'close']) stream.once(end, () => clearTimeout(timer));
      return stream;
    };
    wrapper = {
      // biome-ignore lint/suspicious/noExplicitAny: the overloads of PostgresPoolClient.query
      query: ((text: any, values?: unknown[]) => {
        if (broken) return Promise.reject(broken);
        if (typeof text !== 'string') return boundedCopy(text);
        const name = guard.nameOf(text);
        const started = performance.now();
        const answered = guard.watch?.started(client);
        return client
          .query({
            text,
            values: values as unknown[],
            ...(name !== undefined && { name }),
            ...(guard.queryTimeoutMs !== undefined && { query_timeout: guard.queryTimeoutMs }),
          })
          .then(
            (result) => {
              answered?.();
              return result;
            },
            (error: unknown) => {
              answered?.();
              const unanswered =
                (error instanceof Error && error.message === READ_TIMEOUT) ||
                guard.watch?.closed(client);
              if (!unanswered) throw error;
              broken ??= new DatabaseNotAnswering(Math.round(performance.now() - started));
              throw broken;
            },
          );
      }) as unknown as PostgresPoolClient['query'],
      // A broken connection is closed by the pool (node-postgres: release with an error).
      release: () => client.release(broken),
    };
    wrappers.set(client, wrapper);
    return wrapper;
  };
  return { connect: async () => wrap(await connect()), end };
}
