// The PostgreSQL pools as Kysely uses them (src/db/connect.ts opens them). On top of
// node-postgres's pool, every statement is sent through one wrapper per connection, which
//  - sends a read whose text has been seen as a named prepared statement (statement-cache.ts);
//  - bounds how long the statement may go unanswered: node-postgres's own per-statement
//    `query_timeout`, or, for long work, the liveness watch (liveness.ts);
//  - when the server did not answer, fails the statement and every later one on that
//    connection with DatabaseNotAnswering at once (a transaction's rollback does not wait
//    a second time), and hands the connection back to the pool as broken, so that the pool
//    closes it instead of giving it to the next request. A statement that went unanswered
//    is still outstanding on its connection: anything sent after it would wait behind it.
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
    wrapper = {
      // biome-ignore lint/suspicious/noExplicitAny: the overloads of PostgresPoolClient.query
      query: ((text: any, values?: unknown[]) => {
        if (broken) return Promise.reject(broken);
        // Anything but SQL text goes as it is: a bulk download's COPY (postgres-copy.ts).
        if (typeof text !== 'string') return client.query(text, values);
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
