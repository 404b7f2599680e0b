// A worker thread that runs one of compplan's own modules, and the calls the starting
// thread makes to it: each call a message with an id, each answer (or the error that
// took its place) a message back with the same id. The bulk download's CSV conversion
// (src/modules/bulk/csv-worker.ts) and the audit log's writer (src/audit/writer-thread.ts)
// are such threads.
import {
  type MessagePort,
  type ResourceLimits,
  type Transferable,
  Worker,
} from 'node:worker_threads';

type Message<Job> = { id: number; job: Job };
type Reply<Answer> =
  | { id: number; answer: Answer }
  | { id: number; error: { message: string; code?: unknown } };

/**
 * A thread running the module at `moduleUrl` (the caller's `import.meta.url`). Built,
 * that is the file `builtName` next to the module that starts it: its compiled file, or
 * the bundle's entry of that name beside its chunks (scripts/bundle-cli.js). From the
 * TypeScript sources (as the tests run them), the thread first registers tsx's loader,
 * which it does not inherit from its parent (Node 20 runs module hooks per thread).
 */
export function startModuleThread(
  moduleUrl: string,
  builtName: string,
  options: { workerData: unknown; resourceLimits?: ResourceLimits },
): Worker {
  if (!moduleUrl.endsWith('.ts')) return new Worker(new URL(`./${builtName}`, moduleUrl), options);
  const source = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(moduleUrl)}); })`;
  return new Worker(source, { ...options, eval: true });
}

/**
 * The calls made to one thread. A call that is waiting when the thread stops (an error it
 * did not catch, its exit, its memory limit) is rejected, as is every later one:
 * `stopped` says why.
 */
export class ThreadCalls<Job, Answer> {
  private readonly pending = new Map<
    number,
    { resolve: (answer: Answer) => void; reject: (error: Error) => void }
  >();
  private nextId = 0;
  stopped: Error | undefined;

  constructor(
    readonly worker: Worker,
    /** Names the thread in the error of a stop: "the audit log's writer thread". */
    name: string,
    onStopped: (error: Error) => void = () => undefined,
  ) {
    worker.on('message', (reply: Reply<Answer>) => {
      const call = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if ('error' in reply) {
        call?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      } else call?.resolve(reply.answer);
    });
    const stop = (error: Error) => {
      if (this.stopped) return;
      this.stopped = error;
      for (const call of this.pending.values()) call.reject(error);
      this.pending.clear();
      worker.removeAllListeners();
      onStopped(error);
    };
    worker.on('error', stop);
    worker.on('exit', (code) => stop(new Error(`${name} stopped (exit code ${code})`)));
  }

  /** Calls made and not answered yet. */
  get waiting(): number {
    return this.pending.size;
  }

  /** `transfer`: memory the job hands over to the thread (no longer usable here). */
  call(job: Job, transfer: readonly Transferable[] = []): Promise<Answer> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, job } satisfies Message<Job>, transfer);
    });
  }
}

/**
 * The thread's side: answers each call with `handle`'s result, or the error it threw.
 * `inTurn`: one call at a time, in the order they came (an async `handle` otherwise runs
 * calls side by side). `transferOf`: memory an answer hands back.
 */
export function answerCalls<Job, Answer>(
  port: MessagePort,
  handle: (job: Job) => Answer | Promise<Answer>,
  {
    inTurn = false,
    transferOf = () => [],
  }: {
    inTurn?: boolean;
    transferOf?: (answer: Answer) => readonly Transferable[];
  } = {},
): void {
  let turn = Promise.resolve();
  const answer = async ({ id, job }: Message<Job>) => {
    let reply: Reply<Answer>;
    let transfer: readonly Transferable[] = [];
    try {
      const result = await handle(job);
      reply = { id, answer: result };
      transfer = transferOf(result);
    } catch (error) {
      const { message, code } = error as { message?: unknown; code?: unknown };
      reply = {
        id,
        error: { message: typeof message === 'string' ? message : String(error), code },
      };
    }
    port.postMessage(reply, transfer);
  };
  port.on('message', (message: Message<Job>) => {
    if (inTurn) turn = turn.then(() => answer(message));
    else void answer(message);
  });
}
