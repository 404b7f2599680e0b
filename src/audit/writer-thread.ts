// The audit log's writes to SQLite in a thread of their own (docs/security.md, "Audit
// log"). A batch of a thousand request entries is a statement of 13,000 values and a
// thousand rows in the log's indexes, and better-sqlite3 writes on the thread that calls
// it: on the event loop's, every request of the instance waited for it, milliseconds at a
// time, and /ping lost about 14 % of its throughput to the log (5–7 % with the thread,
// docs/benchmarks.md). Here the thread has a connection of its own, and the event loop
// only hands it the entries. PostgreSQL's writes already leave the event loop
// (node-postgres only encodes the values there), and a thread measured no gain for them.
//
// SQLite in memory (tests, the OpenAPI document's app) cannot be opened twice: its entries
// are written on the event loop's thread, as `writeDirectly` does.
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads';
import type { DatabaseConfig } from '../config.js';
import { type DatabaseHandle, openDatabase } from '../db/connect.js';
import { answerCalls, startModuleThread, ThreadCalls } from '../threads/module-thread.js';
import type { RequestEntry } from './entry.js';
import { insertRequestEntries } from './repository.js';
import type { WriteEntries } from './writer.js';

type SqliteConfig = Extract<DatabaseConfig, { dialect: 'sqlite' }>;
type Job = { entries: readonly RequestEntry[]; wait: boolean } | 'close';

/** Tells this module's thread from other workers of the process. */
const MARK = 'compplan audit writer';

// The thread's heap: a round of at most 10,000 entries (writer.ts) and its statement's
// values, a few MB. Bounded so that the thread adds little to the server's memory; a
// thread that reaches the bound stops, its round is kept and tried again by a new one.
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 48 };

/** On the event loop's thread, through the handle the API uses. */
export function writeDirectly(database: DatabaseHandle): WriteEntries {
  return (entries, wait) => insertRequestEntries(database, entries, wait);
}

/** The writer thread of an instance: started with the server, ended by `close`. */
export class AuditWriterThread {
  private thread: ThreadCalls<Job, void>;
  private closed = false;

  constructor(private readonly config: SqliteConfig) {
    this.thread = this.start();
  }

  readonly write: WriteEntries = (entries, wait) => {
    // A thread that stopped (its memory bound, an error it did not catch) has failed the
    // rounds it held; the writer keeps them, and a new thread takes the next one.
    if (this.thread.stopped && !this.closed) this.thread = this.start();
    return this.thread.call({ entries, wait });
  };

  /** The thread writing now (a new one after a stop). */
  get worker(): Worker {
    return this.thread.worker;
  }

  /** Closes the thread's connection and ends it; the writer has flushed before. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.thread.stopped) return;
    await this.thread.call('close').catch(() => undefined);
    await this.thread.worker.terminate();
  }

  private start(): ThreadCalls<Job, void> {
    const worker = startModuleThread(import.meta.url, 'writer-thread.js', {
      workerData: { mark: MARK, config: this.config },
      resourceLimits: RESOURCE_LIMITS,
    });
    // The thread keeps no instance alive: it ends with `close`, or with the process.
    worker.unref();
    return new ThreadCalls(worker, "the audit log's writer thread");
  }
}

const data = workerData as { mark?: string; config?: SqliteConfig } | undefined;
if (!isMainThread && parentPort && data?.mark === MARK && data.config) {
  // The thread's side: one round at a time, in the order they come.
  const database = openDatabase(data.config);
  answerCalls<Job, void>(
    parentPort,
    (job) =>
      job === 'close' ? database.close() : insertRequestEntries(database, job.entries, job.wait),
    { inTurn: true },
  );
}
