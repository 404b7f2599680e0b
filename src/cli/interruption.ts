// SIGINT and SIGTERM: a command that must not stop half-way (an import, an export to a
// file) turns them into an abort, unwinds (rolls back, removes what it created, saves
// where it got to), prints one line and exits 130 or 143 (128 + the signal's number, as
// shells report a process the signal ended).
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryId,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { CliError } from './errors.js';

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

/** The reason of an `interruptible` command's signal once SIGINT or SIGTERM came. */
export class Interrupted extends Error {
  override name = 'Interrupted';
  constructor(readonly signal: StopSignal) {
    super(`interrupted by ${signal}`);
  }
  get exitCode(): number {
    return SIGNAL_EXIT_CODES[this.signal];
  }
}

/**
 * Runs `work` with SIGINT and SIGTERM aborting `signal` instead of ending the process.
 * When `work` then fails (as it should, soon, once it has unwound), the failure is
 * `describe()` with exit code 130 (SIGINT) or 143 (SIGTERM). A second signal while it
 * unwinds ends the process at once, as without this.
 */
export async function interruptible<T>(
  work: (signal: AbortSignal) => Promise<T>,
  describe: () => string,
): Promise<T> {
  const controller = new AbortController();
  const stop = (name: StopSignal) => controller.abort(new Interrupted(name));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await work(controller.signal);
  } catch (error) {
    const reason: unknown = controller.signal.reason;
    if (reason instanceof Interrupted) throw new CliError(describe(), reason.exitCode);
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** `promise`, or its rejection with `signal`'s reason as soon as `signal` is aborted. */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}

/** Fails every statement but a rollback once `signal` is aborted (see withDatabase). */
export class StopAfterAbort implements KyselyPlugin {
  readonly #rollbacks = new WeakSet<QueryId>();
  constructor(private readonly signal: AbortSignal) {}

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    const rollback =
      node.kind === 'RawNode' && node.sqlFragments.join('').trim().toLowerCase() === 'rollback';
    if (rollback) this.#rollbacks.add(queryId);
    else this.signal.throwIfAborted();
    return node;
  }

  // Statements compiled beforehand (CompiledQuery) skip transformQuery: their results
  // fail instead, which fails the work all the same before it can commit. Node runs a
  // signal's handler from its event loop, which statements that follow one another (with
  // no input to wait for: an import's checks and merge) never return to: each result
  // waits one turn of it, so that the handler runs before the next statement.
  async transformResult({
    result,
    queryId,
  }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.#rollbacks.has(queryId)) return result;
    await new Promise((resolve) => setImmediate(resolve));
    this.signal.throwIfAborted();
    return result;
  }
}
