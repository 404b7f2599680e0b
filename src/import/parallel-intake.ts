// The intake of a file (intake.ts) in a worker thread, as the import's thread sees it.
//
// Why a thread: reading, parsing and validating a file was half of an import's time, and
// the writing the other half, one after the other on one core (docs/benchmarks.md). Here
// the worker reads and checks while this thread writes the batches it sends: the two
// overlap on a machine's second core, and the writing thread keeps the transaction.
//
// The file is read here and its bytes sent on, a few chunks ahead of the worker (it asks
// for each): standard input and files alike, and a read error is this thread's own. Each
// batch the worker sends is acknowledged once written; the worker sends at most
// BATCHES_AHEAD unacknowledged, so neither side's memory grows with the file.
import { Worker } from 'node:worker_threads';
import type { Dialect } from '../db/connect.js';
import { DataSetSyntaxError, ImportError } from './errors.js';
import type { IntakeOutcome, Stage } from './intake.js';
import type { StagedBatch } from './staging.js';

/** Batches the worker may send before the first of them is written. */
export const BATCHES_AHEAD = 2;
/** Chunks of the file (64 KiB each, source.ts) the worker asks for ahead of its parser. */
export const CHUNKS_AHEAD = 4;

export interface IntakeWorkerData {
  /** The file's name: NDJSON by its extension (source.ts, recordsOfStream). */
  name: string;
  dialect: Dialect;
}

/** An error as it crosses from the worker: what is needed to throw it again here. */
export interface SentError {
  name: string;
  message: string;
  problems?: readonly string[];
  stack?: string;
}

export type ToWorker =
  | { type: 'chunk'; bytes: Uint8Array }
  | { type: 'end' }
  /** The oldest batch not yet acknowledged is written. */
  | { type: 'staged' };

export type FromWorker =
  | { type: 'pull' }
  | { type: 'batch'; batch: StagedBatch }
  | { type: 'done'; outcome: IntakeOutcome }
  | { type: 'failed'; error: SentError };

/** What the thread reports: a message, an uncaught error, or its end. */
type WorkerEvent =
  | { kind: 'message'; message: FromWorker }
  | { kind: 'error'; error: Error }
  | { kind: 'exit'; code: number };

/**
 * The worker thread of one file's intake. Started before the database is opened, so
 * that the thread's start-up (about 130 ms: a V8 isolate, then zod and the schemas)
 * overlaps the connection; it reads nothing of the file until `take`, so that a database
 * that cannot be written still fails before the input is read.
 */
export class IntakeWorker {
  private readonly worker: Worker;
  /** What the thread reported before `take` listened: replayed in order. */
  private backlog: WorkerEvent[] = [];
  private listener?: (event: WorkerEvent) => void;

  constructor(name: string, dialect: Dialect) {
    const workerData: IntakeWorkerData = { name, dialect };
    this.worker = new Worker(new URL('./intake-worker.js', import.meta.url), { workerData });
    const report = (event: WorkerEvent) =>
      this.listener ? this.listener(event) : this.backlog.push(event);
    this.worker.on('message', (message: FromWorker) => report({ kind: 'message', message }));
    this.worker.on('error', (error: Error) => report({ kind: 'error', error }));
    this.worker.on('exit', (code: number) => report({ kind: 'exit', code }));
  }

  /** Ends the thread, whether it was taken or not (a command that failed before). */
  stop(): void {
    void this.worker.terminate();
  }

  /**
   * Takes the records of `bytes` in the thread, `stage` awaited here for each batch, in
   * order. Settles once the last batch is written, with the worker's outcome, or at the
   * first failure of either side (or when `signal` aborts); the thread is stopped either way.
   */
  take(
    bytes: AsyncIterable<Uint8Array>,
    stage: Stage,
    signal?: AbortSignal,
  ): Promise<IntakeOutcome> {
    const reader = bytes[Symbol.asyncIterator]();
    const worker = this.worker;
    return new Promise<IntakeOutcome>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: { error: unknown } | { value: IntakeOutcome }) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', abort);
        this.stop();
        if ('error' in outcome) {
          // Closes the file (a stream that is not at its end keeps its descriptor open).
          void reader.return?.().catch(() => undefined);
          reject(outcome.error);
        } else resolve(outcome.value);
      };
      const fail = (error: unknown) => settle({ error });
      const abort = () => fail(signal?.reason);
      if (signal?.aborted) return abort();
      signal?.addEventListener('abort', abort, { once: true });

      // One read at a time, one write at a time, each in the order asked.
      let reading = Promise.resolve();
      let writing = Promise.resolve();
      const send = (message: ToWorker) => {
        if (!settled) worker.postMessage(message);
      };
      const onMessage = (message: FromWorker) => {
        switch (message.type) {
          case 'pull':
            reading = reading
              .then(async () => {
                if (settled) return;
                const next = await reader.next();
                send(next.done ? { type: 'end' } : { type: 'chunk', bytes: next.value });
              })
              .catch(fail);
            return;
          case 'batch':
            writing = writing
              .then(async () => {
                if (settled) return;
                await stage(message.batch);
                send({ type: 'staged' });
              })
              .catch(fail);
            return;
          case 'done':
            writing = writing.then(() => settle({ value: message.outcome }));
            return;
          case 'failed':
            fail(thrown(message.error));
            return;
        }
      };
      this.listener = (event) => {
        if (event.kind === 'message') onMessage(event.message);
        else if (event.kind === 'error') fail(event.error);
        else {
          fail(
            new Error(`the import's worker thread stopped unexpectedly (exit code ${event.code})`),
          );
        }
      };
      const backlog = this.backlog;
      this.backlog = [];
      for (const event of backlog) this.listener(event);
    });
  }
}

/** An error of the worker as it goes across (sentError) and back (thrown). */
export function sentError(error: unknown): SentError {
  if (error instanceof ImportError) {
    return { name: error.name, message: error.message, problems: error.problems };
  }
  if (error instanceof Error)
    return { name: error.name, message: error.message, stack: error.stack };
  return { name: 'Error', message: String(error) };
}

function thrown(error: SentError): Error {
  if (error.name === 'ImportError') return new ImportError(error.problems ?? [error.message]);
  if (error.name === 'DataSetSyntaxError') return new DataSetSyntaxError(error.message);
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name;
  if (error.stack) rebuilt.stack = error.stack;
  return rebuilt;
}
