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
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { type HiddenColumns, hidesNothing } from '../../columns/hidden.js';
import { employeeRowWriter } from '../../export/csv.js';
import { answerCalls, startModuleThread, ThreadCalls } from '../../threads/module-thread.js';
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
  /** The key's hidden columns in the cycle, taken out of each employee. */
  hidden: HiddenColumns;
}

type Job = Omit<CsvChunk, 'texts'> & { texts: Uint8Array<ArrayBuffer> };
type Answer = Uint8Array<ArrayBuffer>;

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
    text += rowOf(!hidesNothing(hidden) ? removeColumns(employee, hidden) : employee);
    if (text.length > BLOCK_CHARACTERS) {
      blocks.push(Buffer.from(text));
      text = '';
    }
    start = end + 1;
  }
  blocks.push(Buffer.from(text));
  return Buffer.concat(blocks);
}

/** The worker threads that make the CSV of bulk downloads. */
export class CsvWorkers {
  private threads: ThreadCalls<Job, Answer>[] = [];
  private closed = false;

  constructor(private readonly size = THREADS) {}

  /**
   * The CSV rows of `chunk` (csvOfTexts), made in a worker thread. Its texts are handed
   * over: the caller must not read them again. Rejects if the conversion fails, or its
   * thread does (a new one takes the next chunk).
   */
  async convert(chunk: CsvChunk): Promise<Buffer> {
    if (this.closed) throw new Error('the CSV worker threads are closed');
    const texts = ownBytes(chunk.texts);
    let csv: Answer;
    try {
      csv = await this.threadForNext().call({ ...chunk, texts }, [texts.buffer]);
    } catch (error) {
      throw new Error(`the CSV conversion failed: ${(error as Error).message}`);
    }
    return Buffer.from(csv.buffer, csv.byteOffset, csv.byteLength);
  }

  /** Ends the threads (the app closes); a conversion still running is rejected. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
  }

  /** An idle thread; else a new one while there are fewer than `size`; else the least busy. */
  private threadForNext(): ThreadCalls<Job, Answer> {
    const idle = this.threads.find((thread) => thread.waiting === 0);
    if (idle) return idle;
    if (this.threads.length < this.size) {
      const thread = this.start();
      this.threads.push(thread);
      return thread;
    }
    return this.threads.reduce((a, b) => (b.waiting < a.waiting ? b : a));
  }

  private start(): ThreadCalls<Job, Answer> {
    const worker = startModuleThread(import.meta.url, 'csv-worker.js', {
      workerData: { mark: MARK },
    });
    // An idle thread does not keep the process alive; a download in progress does.
    worker.unref();
    const thread: ThreadCalls<Job, Answer> = new ThreadCalls(worker, 'a CSV worker thread', () => {
      this.threads = this.threads.filter((other) => other !== thread);
      void worker.terminate();
    });
    return thread;
  }
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

if (!isMainThread && parentPort && (workerData as { mark?: string } | undefined)?.mark === MARK) {
  // The thread's side: each chunk's CSV bytes, handed back.
  answerCalls<Job, Answer>(
    parentPort,
    (job) => {
      const texts = Buffer.from(job.texts.buffer, job.texts.byteOffset, job.texts.byteLength);
      return ownBytes(csvOfTexts({ ...job, texts }));
    },
    { transferOf: (csv) => [csv.buffer] },
  );
}
