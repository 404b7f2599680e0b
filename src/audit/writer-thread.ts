// The audit log's writes to SQLite in a thread of their own (docs/security.md, "Audit
// log"). A batch of a thousand request entries is a statement of 13,000 values and a
// thousand rows in the log's indexes, and better-sqlite3 writes on the thread that calls
// it: on the event loop's, every request of the instance waited for it, milliseconds at a
// time, and /ping lost 15 % of its throughput. Here the thread has a connection of its
// own, and the event loop only hands it the entries. PostgreSQL's writes already leave
// the event loop (node-postgres only encodes the values there), and a thread measured no
// gain for them.
//
// SQLite in memory (tests, the OpenAPI document's app) cannot be opened twice: its entries
// are written on the event loop's thread, as `writeDirectly` does.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { DatabaseConfig } from '../config.js';
import { type DatabaseHandle, openDatabase } from '../db/connect.js';
import type { RequestEntry } from './entry.js';
import { insertRequestEntries } from './repository.js';

/** Writes a batch of request entries; `wait`: for another writer's lock, as at shutdown. */
export type WriteEntries = (entries: readonly RequestEntry[], wait: boolean) => Promise<void>;

/** Tells this module's thread from other workers of the process. */
const MARK = 'compplan-audit-writer';

interface Job {
  id: number;
  entries: readonly RequestEntry[];
  wait: boolean;
}
type Answer = { id: number } | { id: number; error: { message: string; code?: unknown } };

/** On the event loop's thread, through the handle the API uses. */
export function writeDirectly(database: DatabaseHandle): WriteEntries {
  return (entries, wait) => insertRequestEntries(database, entries, wait);
}

/** The writer thread of an instance: started with the server, ended by `close`. */
export class AuditWriterThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(): void; reject(error: Error): void }>();
  private nextId = 0;
  private stopped: Error | undefined;

  constructor(config: Extract<DatabaseConfig, { dialect: 'sqlite' }>) {
    this.worker = startWorker(config);
    this.worker.on('message', (answer: Answer) => {
      const job = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if ('error' in answer) {
        job?.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
      } else job?.resolve();
    });
    const fail = (error: Error) => {
      this.stopped = error;
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) =>
      fail(new Error(`the audit log's writer thread stopped (exit code ${code})`)),
    );
    // The thread keeps no instance alive: it ends with `close`, or with the process.
    this.worker.unref();
  }

  readonly write: WriteEntries = (entries, wait) => {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, entries, wait } satisfies Job);
    });
  };

  /** Closes the thread's connection and ends it; the writer has flushed before. */
  async close(): Promise<void> {
    if (this.stopped) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    await exited;
  }
}

/**
 * A thread running this module: writer-thread.js next to the module that starts it (its
 * compiled file, or the bundle's entry of that name beside its chunks,
 * scripts/bundle-cli.js). From the TypeScript sources (the tests), the thread first
 * registers tsx's loader, which it does not inherit (Node 20 runs module hooks per thread).
 */
function startWorker(config: DatabaseConfig): Worker {
  const options = { workerData: { mark: MARK, config } };
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./writer-thread.js', import.meta.url), options);
  }
  const source = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  return new Worker(source, { ...options, eval: true });
}

/** The thread's side: one batch at a time, in the order they come. */
function writeEntries(port: NonNullable<typeof parentPort>, config: DatabaseConfig) {
  const database = openDatabase(config);
  let queue = Promise.resolve();
  port.on('message', (job: Job | 'close') => {
    queue = queue.then(async () => {
      if (job === 'close') {
        await database.close();
        port.close();
        return;
      }
      let answer: Answer;
      try {
        await insertRequestEntries(database, job.entries, job.wait);
        answer = { id: job.id };
      } catch (error) {
        const { message, code } = error as { message?: string; code?: unknown };
        answer = { id: job.id, error: { message: message ?? String(error), code } };
      }
      port.postMessage(answer);
    });
  });
}

const data = workerData as { mark?: string; config?: DatabaseConfig } | undefined;
if (!isMainThread && parentPort && data?.mark === MARK && data.config) {
  writeEntries(parentPort, data.config);
}
