// The CSV form of a bulk download, made in a worker thread (docs/bulk-download.md, "CSV").
// Making CSV of the stored texts costs about three times reading them (JSON.parse of each
// ~1 KB text, then its cells): on the event loop, one after the other with the reads, it
// set the pace of a CSV download and held up every other request meanwhile. In a worker
// thread a chunk is converted while the download reads the next one (download.ts).
//
// One module, both sides. CsvWorkers is the server's pool, shared by its downloads: the
// threads start when a CSV download first needs one, and each chunk goes to an idle one.
// A chunk's texts are handed to the thread (transferred, not copied) and its CSV bytes
// handed back the same way.
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { employeeRowWriter } from '../../export/csv.js';
import { removeColumns } from '../employees/hidden-columns.js';
import type { Employee } from '../employees/schema.js';

const MARK = 'compplan bulk csv';

// One thread fewer than the cores: the server's own thread reads the next chunk and sends
// the last meanwhile. One on two cores.
const THREADS = Math.max(1, availableParallelism() - 1);

// The CSV made so far is turned into bytes at about this many characters, so that no long
// string lives through a chunk of a thousand employees (the garbage collector's cost).
const BLOCK_CHARACTERS = 64 * 1024;

/** A chunk to convert: stored texts separated by `separator`, UTF-8 (csvOfTexts). */
export interface CsvChunk {
  texts: Buffer;
  separator: number;
  /** The download's CSV header (its last column columns.other). */
  header: readonly string[];
  /** The key's hidden column keys, taken out of each employee. */
  hidden: readonly string[];
}

type Job = Omit<CsvChunk, 'texts'> & { id: number; texts: Uint8Array<ArrayBuffer> };
type Answer = { id: number; csv: Uint8Array<ArrayBuffer> } | { id: number; error: string };

/**
 * The CSV rows of a chunk of stored employee texts: each employee without the hidden
 * columns, written under `header` as the export writes it (employeeRowWriter).
 */
export function csvOfTexts({ texts, separator, header, hidden }: CsvChunk): Buffer {
  const rowOf = employeeRowWriter(header);
  const blocks: Buffer[] = [];
  let text = '';
  for (let start = 0; start <= texts.length; ) {
    const found = texts.indexOf(separator, start);
    const end = found === -1 ? texts.length : found;
    const employee = JSON.parse(texts.toString('utf8', start, end)) as Employee;
    text += rowOf(hidden.length > 0 ? removeColumns(employee, hidden) : employee);
    if (text.length > BLOCK_CHARACTERS) {
      blocks.push(Buffer.from(text));
      text = '';
    }
    start = end + 1;
  }
  blocks.push(Buffer.from(text));
  return Buffer.concat(blocks);
}

interface Thread {
  worker: Worker;
  /** The chunks it was given and has not answered, by id. */
  pending: Map<number, { resolve: (csv: Buffer) => void; reject: (error: Error) => void }>;
}

/** The worker threads that make the CSV of bulk downloads. */
export class CsvWorkers {
  private threads: Thread[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly size = THREADS) {}

  /**
   * The CSV rows of `chunk` (csvOfTexts), made in a worker thread. Its texts are handed
   * over: the caller must not read them again. Rejects if the conversion fails, or its
   * thread does (a new one takes the next chunk).
   */
  convert(chunk: CsvChunk): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('the CSV worker threads are closed'));
    const thread = this.threadForNext();
    const id = this.nextId++;
    const texts = ownBytes(chunk.texts);
    const job: Job = { ...chunk, id, texts };
    return new Promise<Buffer>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage(job, [texts.buffer]);
    });
  }

  /** Ends the threads (the app closes); a conversion still running is rejected. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
  }

  /** An idle thread; else a new one while there are fewer than `size`; else the least busy. */
  private threadForNext(): Thread {
    const idle = this.threads.find((thread) => thread.pending.size === 0);
    if (idle) return idle;
    if (this.threads.length < this.size) {
      const thread = this.start();
      this.threads.push(thread);
      return thread;
    }
    return this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  private start(): Thread {
    const worker = startWorker();
    // An idle thread does not keep the process alive; a download in progress does.
    worker.unref();
    const thread: Thread = { worker, pending: new Map() };
    const fail = (error: Error) => {
      this.threads = this.threads.filter((other) => other !== thread);
      for (const { reject } of thread.pending.values()) reject(error);
      thread.pending.clear();
      worker.removeAllListeners();
      void worker.terminate();
    };
    worker.on('message', (answer: Answer) => {
      const job = thread.pending.get(answer.id);
      thread.pending.delete(answer.id);
      if ('csv' in answer) {
        job?.resolve(Buffer.from(answer.csv.buffer, answer.csv.byteOffset, answer.csv.byteLength));
      } else job?.reject(new Error(`the CSV conversion failed: ${answer.error}`));
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a CSV worker thread stopped (exit code ${code})`)));
    return thread;
  }
}

/**
 * A thread running this module. Built, that is csv-worker.js next to the module that
 * starts it: this one's compiled file, or the bundle's entry of that name beside its
 * chunks (scripts/bundle-cli.js). From the TypeScript sources (as the tests run it, from
 * the project's folder), the thread first registers tsx's loader, which it does not
 * inherit from its parent (Node 20 runs module hooks per thread).
 */
function startWorker(): Worker {
  const options = { workerData: { mark: MARK } };
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./csv-worker.js', import.meta.url), options);
  }
  const source = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  return new Worker(source, { ...options, eval: true });
}

/**
 * The bytes over a memory of their own, which can be transferred: a small Buffer is a
 * view of a pool that other Buffers share, and transferring it would take it from them.
 */
function ownBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const { buffer, byteOffset, byteLength } = bytes;
  return buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength
    ? new Uint8Array(buffer)
    : new Uint8Array(bytes);
}

/** The thread's side: each chunk's CSV bytes, or why there are none. */
function convertChunks(port: NonNullable<typeof parentPort>) {
  port.on('message', (job: Job) => {
    let answer: Answer;
    try {
      const texts = Buffer.from(job.texts.buffer, job.texts.byteOffset, job.texts.byteLength);
      answer = { id: job.id, csv: ownBytes(csvOfTexts({ ...job, texts })) };
    } catch (error) {
      answer = { id: job.id, error: String(error) };
    }
    port.postMessage(answer, 'csv' in answer ? [answer.csv.buffer] : []);
  });
}

if (!isMainThread && parentPort && (workerData as { mark?: string } | undefined)?.mark === MARK) {
  convertChunks(parentPort);
}
