// The conversions of a bulk download, made in a worker thread (docs/bulk-download.md,
// "Conversions in a worker thread"): the CSV (both layouts) and the flat NDJSON. Making
// them of the stored texts costs about three times reading them (JSON.parse of each ~1 KB
// text, then its cells): on the event loop, one after the other with the reads, it set the
// pace of a CSV download and held up every other request meanwhile. In a worker thread a
// chunk is converted while the download reads the next one (download.ts).
//
// One module, both sides. CsvWorkers is the server's pool, shared by its downloads: the
// threads start when a download first needs one, and each chunk goes to an idle one.
// A chunk's texts are handed to the thread (transferred, not copied) and its bytes
// handed back the same way.
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { type HiddenColumns, hidesNothing } from '../../columns/hidden.js';
import { employeeRowWriter } from '../../export/csv.js';
import { JSON_TEXT_START } from '../../export/flat-line.js';
import { type FlatLayout, flatRowWriter } from '../../export/flat-row.js';
import { answerCalls, startModuleThread, ThreadCalls } from '../../threads/module-thread.js';
import { removeColumns } from '../employees/hidden-columns.js';
import type { Employee } from '../employees/schema.js';

const MARK = 'compplan bulk csv';

// One thread fewer than the cores: the server's own thread reads the next chunk and sends
// the last meanwhile. One on two cores.
const THREADS = Math.max(1, availableParallelism() - 1);

// A thread without work for this long is ended: its heap and the memory of the chunks it
// converted go back to the system instead of staying in the server's resident memory
// until the next CSV download (docs/benchmarks.md, "Bulk download"). Starting one again
// takes a few tens of milliseconds, once a download.
const IDLE_MS = 2_000;

// The CSV made so far is turned into bytes at about this many characters, so that no long
// string lives through a chunk of a thousand employees (the garbage collector's cost).
const BLOCK_CHARACTERS = 64 * 1024;

/**
 * How each employee is written: `nested` CSV, the export's layout under `header` (its last
 * column columns.other) without the key's `hidden` columns; `flat`, the flat row of
 * `layout` (export/flat-row.ts) as CSV or NDJSON.
 */
export type RowForm =
  | { shape: 'nested'; header: readonly string[]; hidden: HiddenColumns }
  | { shape: 'flat'; form: 'csv' | 'ndjson'; layout: FlatLayout };

/** A chunk to convert: stored texts separated by `separator`, UTF-8 (csvOfTexts). */
export interface CsvChunk {
  texts: Buffer;
  separator: number;
  rows: RowForm;
}

type Job = Omit<CsvChunk, 'texts'> & { texts: Uint8Array<ArrayBuffer> };
type Answer = Uint8Array<ArrayBuffer>;

/** Writes one employee in the form asked for. */
function rowWriter(rows: RowForm): (employee: Employee) => string {
  if (rows.shape === 'flat') return flatRowWriter(rows.layout, rows.form);
  const { header, hidden } = rows;
  const rowOf = employeeRowWriter(header);
  return hidesNothing(hidden) ? rowOf : (employee) => rowOf(removeColumns(employee, hidden));
}

/**
 * The rows of a chunk of stored employee texts, each employee written as `rows` says: the
 * export's CSV layout without the hidden columns (employeeRowWriter), or the flat row. A
 * text that is not JSON (it does not begin with `{`) is a flat CSV line as the import
 * stored it (export/flat-line.ts), read only for the flat CSV: its bytes go out as they are.
 */
export function csvOfTexts({ texts, separator, rows }: CsvChunk): Buffer {
  const rowOf = rowWriter(rows);
  const blocks: Buffer[] = [];
  let text = '';
  for (let start = 0; start <= texts.length; ) {
    const found = texts.indexOf(separator, start);
    const end = found === -1 ? texts.length : found;
    if (texts[start] !== JSON_TEXT_START) {
      if (text !== '') blocks.push(Buffer.from(text));
      text = '';
      blocks.push(texts.subarray(start, end));
    } else {
      text += rowOf(JSON.parse(texts.toString('utf8', start, end)) as Employee);
      if (text.length > BLOCK_CHARACTERS) {
        blocks.push(Buffer.from(text));
        text = '';
      }
    }
    start = end + 1;
  }
  blocks.push(Buffer.from(text));
  return Buffer.concat(blocks);
}

/** The worker threads that make the CSV and flat NDJSON of bulk downloads. */
export class CsvWorkers {
  private threads: ThreadCalls<Job, Answer>[] = [];
  private readonly idleTimers = new Map<ThreadCalls<Job, Answer>, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly size = THREADS,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** Threads running now. */
  get running(): number {
    return this.threads.length;
  }

  /**
   * The CSV rows of `chunk` (csvOfTexts), made in a worker thread. Its texts are handed
   * over: the caller must not read them again. Rejects if the conversion fails, or its
   * thread does (a new one takes the next chunk).
   */
  async convert(chunk: CsvChunk): Promise<Buffer> {
    if (this.closed) throw new Error('the CSV worker threads are closed');
    const texts = ownBytes(chunk.texts);
    const thread = this.threadForNext();
    clearTimeout(this.idleTimers.get(thread));
    let csv: Answer;
    try {
      csv = await thread.call({ ...chunk, texts }, [texts.buffer]);
    } catch (error) {
      throw new Error(`the CSV conversion failed: ${(error as Error).message}`);
    } finally {
      if (thread.waiting === 0 && !thread.stopped) this.endWhenIdle(thread);
    }
    return Buffer.from(csv.buffer, csv.byteOffset, csv.byteLength);
  }

  /** Ends `thread` once it has had no work for `idleMs`. */
  private endWhenIdle(thread: ThreadCalls<Job, Answer>): void {
    const timer = setTimeout(() => {
      this.idleTimers.delete(thread);
      if (thread.waiting > 0) return;
      this.threads = this.threads.filter((other) => other !== thread);
      void thread.worker.terminate();
    }, this.idleMs);
    // An idle thread's timer keeps no process alive.
    timer.unref();
    this.idleTimers.set(thread, timer);
  }

  /** Ends the threads (the app closes); a conversion still running is rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
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
