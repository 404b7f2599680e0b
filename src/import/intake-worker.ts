// The intake of a file (intake.ts) in a worker thread. Parsing and validating a file was
// half of an import's time and the writing the other half, one after the other on one
// core; here the worker parses and checks while the import's thread, which holds the
// transaction, writes the batches it sends (docs/benchmarks.md, "Import").
//
// One module, both sides. The worker is handed a file's handle, which it reads itself (the
// import's thread, busy writing, must not be what the reading waits for), or standard
// input as a web stream read by the import's thread (only that thread can stop waiting for
// a pipe; a worker waiting for one would keep the process from ending). It sends each
// batch, then its outcome or its failure; each batch is acknowledged once written, and at
// most BATCHES_AHEAD go unacknowledged: a slow database slows the reading instead of
// filling memory.
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  isMainThread,
  parentPort,
  type TransferListItem,
  Worker,
  workerData,
} from 'node:worker_threads';
import type { Dialect } from '../db/connect.js';
import { ImportError, type Problem } from './errors.js';
import { type IntakeOutcome, type Stage, takeRecords } from './intake.js';
import { readableOf, recordsOfStream, type Source } from './source.js';
import type { StagedBatch } from './staging.js';

const BATCHES_AHEAD = 2;
const MARK = 'compplan import intake';

/** `name`: the file's name, NDJSON by its extension (source.ts). */
type Start = { mark: typeof MARK; name: string; dialect: Dialect };

type FromWorker =
  | { batch: StagedBatch }
  | { outcome: IntakeOutcome }
  | { problems: readonly Problem[]; total: number }
  | { error: string };

/**
 * The worker thread of one file's intake. Started before the database is opened, so that
 * its start-up (a V8 isolate, then zod and the schemas) overlaps the connection; it reads
 * nothing of the file until `take`, so that a database that cannot be written still fails
 * before the input is read.
 */
export class IntakeWorker {
  private readonly worker: Worker;

  constructor(name: string, dialect: Dialect) {
    const workerData: Start = { mark: MARK, name, dialect };
    this.worker = new Worker(new URL('./intake-worker.js', import.meta.url), { workerData });
  }

  /** Ends the thread, whether it was taken or not (a command that failed before). */
  stop(): void {
    void this.worker.terminate();
  }

  /**
   * Takes the records of `source` in the thread, `stage` awaited here for each batch, in
   * order. Settles once the last batch is written, with the worker's outcome, or at the
   * first failure of either side, or when `signal` aborts; the thread is stopped either way.
   */
  take(source: Source, stage: Stage, signal?: AbortSignal): Promise<IntakeOutcome> {
    const worker = this.worker;
    return new Promise<IntakeOutcome>((resolve, reject) => {
      let settled = false;
      const settle = (done: () => void) => {
        settled = true;
        if (source === 'stdin') process.stdin.destroy();
        signal?.removeEventListener('abort', abort);
        worker.removeAllListeners();
        this.stop();
        done();
      };
      const fail = (error: unknown) => settle(() => reject(error));
      const abort = () => fail(signal?.reason);
      if (signal?.aborted) return abort();
      signal?.addEventListener('abort', abort, { once: true });
      // One write at a time, in the order the batches come; none once it has failed (the
      // transaction is being rolled back).
      let writing = Promise.resolve();
      worker.on('message', (message: FromWorker) => {
        if ('batch' in message) {
          writing = writing
            .then(() => (settled ? undefined : stage(message.batch)))
            .then(() => worker.postMessage('written'))
            .catch(fail);
        } else if ('outcome' in message) {
          void writing.then(() => settle(() => resolve(message.outcome)));
        } else if ('problems' in message) {
          fail(new ImportError(message.problems, message.total));
        } else fail(new Error(message.error));
      });
      worker.on('error', fail);
      worker.on('exit', (code) =>
        fail(new Error(`the import's worker thread stopped (exit code ${code})`)),
      );
      const input = source === 'stdin' ? Readable.toWeb(process.stdin) : source;
      worker.postMessage(input, [input as unknown as TransferListItem]);
    });
  }
}

/** The worker's side: read, parse and validate the source it is given; send the batches. */
async function intake(port: NonNullable<typeof parentPort>, { name, dialect }: Start) {
  const post = (message: FromWorker) => port.postMessage(message);
  const input = await new Promise<FileHandle | ReadableStream<Uint8Array>>((resolve) =>
    port.once('message', resolve),
  );
  let credits = BATCHES_AHEAD;
  let wake = () => {};
  port.on('message', () => {
    credits++;
    wake();
  });
  try {
    const bytes = input instanceof ReadableStream ? input : readableOf(input);
    const outcome = await takeRecords(
      await recordsOfStream(name, bytes),
      dialect,
      async (batch) => {
        while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
        credits--;
        post({ batch });
      },
    );
    post({ outcome });
  } catch (error) {
    post(
      error instanceof ImportError
        ? { problems: error.problems, total: error.total }
        : { error: (error as Error).stack ?? String(error) },
    );
  }
}

if (!isMainThread && parentPort && (workerData as Start | undefined)?.mark === MARK) {
  void intake(parentPort, workerData as Start);
}
