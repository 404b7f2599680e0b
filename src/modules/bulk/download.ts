// A cycle's employees as a stream of bytes, read from a snapshot a chunk at a time, and
// only as fast as the client takes them: the next chunk is read from the database when
// the stream is asked for more (Readable's _read), which it is once what was sent has
// left its buffer for the socket. Destroying the stream (the client left, the server
// shuts down) closes the snapshot: the database read ends with it.
//
// Each chunk is handed to the writer (formats.ts) as soon as it is read. NDJSON's writer
// answers at once; CSV's converts in a worker thread (csv-worker.ts) and answers later,
// and meanwhile the next chunk is read: the read of one chunk overlaps the conversion of
// the one before. The writer says how many chunks it may hold (`ahead`: 1 for NDJSON, 2
// for CSV), so memory holds a few chunks whatever the cycle's size. The order of things,
// in nextChunk: read and hand over until the writer holds `ahead` chunks (or the cycle is
// read whole), then await the oldest one's bytes and push them.
//
// On PostgreSQL the texts come through COPY (the snapshot's copyOut), and the statement of the
// next chunk is sent as soon as one chunk has arrived: PostgreSQL reads it while this
// thread joins, converts and sends the one before. (SQLite's reads run on this thread:
// there is nothing to overlap them with.)
import { Readable } from 'node:stream';
import type { Dialect } from '../../db/connect.js';
import type { ReadScope } from '../../tenancy/scope.js';
import { afterLastText, readEmployeeTexts } from '../employees/repository.js';
import type { EmployeeAfter } from '../employees/schema.js';
import type { ChunkWriter } from './formats.js';
import type { Snapshot } from './snapshot.js';

// Employees read per statement: about 1 MiB of stored text, whatever an employee's size
// (the first statement reads a few, the next as many as the texts so far say fit), and at
// most 2,000: few enough statements that each one's cost disappears in a million rows.
const CHUNK_BYTES = 1024 * 1024;
const FIRST_CHUNK_EMPLOYEES = 200;
const MAX_CHUNK_EMPLOYEES = 2_000;

export interface DownloadSource {
  snapshot: Snapshot;
  dialect: Dialect;
  scope: ReadScope;
  meritCycleId: string;
  writer: ChunkWriter;
  /**
   * The flat CSV: the key of the layout whose stored lines the writer takes as they are
   * (readEmployeeTexts).
   */
  flatKey?: string;
  /** Told how many employees each chunk read (the download metrics). */
  onRows?: (count: number) => void;
  /** Told how many employees each chunk handed to the response holds (the audit log). */
  onSent?: (count: number) => void;
}

export class EmployeeDownload extends Readable {
  private after: EmployeeAfter | undefined;
  private chunkEmployees = FIRST_CHUNK_EMPLOYEES;
  private started = false;
  /** The last read found the end of the cycle (its chunk may still be on its way). */
  private finished = false;
  /** Employees in the chunk nextChunk last returned. */
  private employeesInChunk = 0;
  /** PostgreSQL: the next chunk's read, sent while the one before is handled. */
  private readAhead: Promise<Read | undefined> | undefined;
  /**
   * The chunks handed to the writer and not yet pushed, oldest first: their bytes to come,
   * and how many employees each holds.
   */
  private readonly written: { bytes: Promise<Buffer>; employees: number }[] = [];

  constructor(private readonly source: DownloadSource) {
    super();
  }

  // Readable calls this again only after a push: one nextChunk runs at a time.
  override _read(): void {
    this.nextChunk().then(
      (chunk) => {
        // A client that left drops what was still being converted.
        if (this.destroyed) return;
        if (this.employeesInChunk > 0) this.source.onSent?.(this.employeesInChunk);
        this.push(chunk);
      },
      // A failed read or conversion ends the response at once, as any stream error does.
      (error: unknown) => this.destroy(error as Error),
    );
  }

  private async nextChunk(): Promise<Buffer | null> {
    const { writer } = this.source;
    while (!this.readWhole && !this.destroyed && this.written.length < writer.ahead) {
      const read = await this.readChunk();
      if (read) {
        this.written.push({ bytes: handedOver(writer.write(read.texts)), employees: read.count });
      }
    }
    const oldest = this.written.shift();
    const body = oldest ? await oldest.bytes : undefined;
    this.employeesInChunk = oldest?.employees ?? 0;
    const head = this.started ? undefined : writer.head;
    this.started = true;
    const chunk = head && body ? Buffer.concat([head, body]) : (body ?? head);
    // An empty push would not ask for more: an empty cycle's NDJSON ends at once.
    if (!chunk || chunk.length === 0) {
      return this.readWhole && this.written.length === 0 ? null : this.nextChunk();
    }
    return chunk;
  }

  /** Whether every chunk has been read and taken: the last read found the cycle's end. */
  private get readWhole(): boolean {
    return this.finished && this.readAhead === undefined;
  }

  /** The next chunk's stored texts and their count (none once the cycle is read). */
  private async readChunk(): Promise<Read | undefined> {
    const read = this.readAhead ?? this.readNext();
    this.readAhead = undefined;
    const chunk = await read;
    if (this.source.snapshot.copyOut && !this.finished && !this.destroyed) {
      this.readAhead = handedOver(this.readNext());
    }
    return chunk;
  }

  /** Reads the chunk after the last one read; one at a time, in order. */
  private async readNext(): Promise<Read | undefined> {
    const { snapshot, dialect, scope, meritCycleId, flatKey } = this.source;
    const limit = this.chunkEmployees;
    const found = await readEmployeeTexts(
      snapshot.db,
      dialect,
      scope,
      meritCycleId,
      this.after,
      limit,
      { copyOut: snapshot.copyOut, flatKey },
    );
    const count = found?.count ?? 0;
    if (count < limit) this.finished = true;
    else if (found) {
      this.after = afterLastText(found.texts);
      const bytesEach = found.texts.length / count;
      this.chunkEmployees = Math.max(
        1,
        Math.min(MAX_CHUNK_EMPLOYEES, Math.floor(CHUNK_BYTES / bytesEach)),
      );
    }
    this.source.onRows?.(count);
    return found && count > 0 ? { texts: found.texts, count } : undefined;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.source.snapshot.close().then(
      () => callback(error),
      () => callback(error),
    );
  }
}

/** A chunk as read: its stored texts and how many. */
interface Read {
  texts: Buffer;
  count: number;
}

/**
 * A chunk's bytes, or the next chunk's read, as a promise that may fail before it is
 * awaited (while the next chunk is read, or never, once the client has left) without
 * counting as an unhandled rejection: its failure is met where it is awaited.
 */
function handedOver<T>(value: T | Promise<T>): Promise<T> {
  const promise = Promise.resolve(value);
  promise.catch(() => {});
  return promise;
}
