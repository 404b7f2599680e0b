// An import file (or standard input) as a stream of text, decoded strictly from UTF-8, and
// its records: NDJSON or JSON, told apart by the name or by the start of the stream, never
// by reading it all. A CSV file is read whole, within CSV_MAX_BYTES (readCsvText).
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { CSV_MAX_BYTES, csvTooLarge } from './csv.js';
import { DataSetSyntaxError, ImportError } from './errors.js';
import { jsonRecords } from './json-stream.js';
import { isOrganizationLine, ndjsonRecords } from './ndjson.js';
import type { ImportRecord } from './records.js';

// Chunks of 64 KiB: large enough that reading costs little, small enough to keep no more
// than a few employees' worth of text at a time.
const CHUNK_BYTES = 64 * 1024;
// How much of the stream the format test reads at most for the first line. An NDJSON
// organization line is a few hundred bytes; a JSON file often has no line break at all
// (minified), and must not be read whole to find that out.
const FIRST_LINE_LIMIT = 1024 * 1024;

/** A file that cannot be read: the reason, as the command says it. */
export class SourceError extends Error {
  override name = 'SourceError';
}

/**
 * Opens FILE, or standard input for `-`, for reading as bytes (text comes of them through
 * decodeUtf8); fails at once for a missing file or a directory.
 */
export async function openSource(file: string): Promise<AsyncIterable<Uint8Array>> {
  if (file === '-') return process.stdin as AsyncIterable<Uint8Array>;
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
    if ((await handle.stat()).isDirectory()) {
      await handle.close();
      throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SourceError(
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : (error as Error).message,
    );
  }
  return handle.createReadStream({ highWaterMark: CHUNK_BYTES });
}

/** The length of the complete UTF-8 sequences at the start of `bytes`: a character cut
 * in two by the end of a chunk waits for the next one. */
function completeLength(bytes: Uint8Array): number {
  const length = bytes.length;
  // The lead byte of the last sequence is at most 3 bytes from the end.
  for (let i = length - 1; i >= 0 && i >= length - 4; i--) {
    const byte = bytes[i] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length - i < needs ? i : length;
  }
  return length;
}

/**
 * Where the first byte that is not UTF-8 is in `bytes` (as WHATWG's decoder finds it: an
 * overlong form, a surrogate, a code point above U+10FFFF, a sequence cut short), and
 * whether it starts a sequence that `bytes` ends inside of; `at` is `bytes.length` when
 * there is none.
 */
function firstInvalid(bytes: Uint8Array): { at: number; cut: boolean } {
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i] as number;
    if (byte < 0x80) {
      i++;
      continue;
    }
    let needs: number;
    let low = 0x80;
    let high = 0xbf;
    if (byte >= 0xc2 && byte <= 0xdf) needs = 1;
    else if (byte >= 0xe0 && byte <= 0xef) {
      needs = 2;
      if (byte === 0xe0) low = 0xa0;
      if (byte === 0xed) high = 0x9f;
    } else if (byte >= 0xf0 && byte <= 0xf4) {
      needs = 3;
      if (byte === 0xf0) low = 0x90;
      if (byte === 0xf4) high = 0x8f;
    } else return { at: i, cut: false };
    for (let k = 1; k <= needs; k++) {
      const next = bytes[i + k];
      if (next === undefined) return { at: i, cut: true };
      if (next < low || next > high) return { at: i, cut: false };
      low = 0x80;
      high = 0xbf;
    }
    i += needs + 1;
  }
  return { at: bytes.length, cut: false };
}

const hex = (byte: number) => `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * Text from UTF-8 bytes, decoded strictly: a byte that is not UTF-8 fails with
 * `not valid UTF-8 (line L, column C): …` instead of becoming U+FFFD. A byte order mark is
 * kept, for the reader to skip at the start. Chunks that are text already pass as they are.
 */
export async function* decodeUtf8(
  chunks: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  // Where the text stands, to say where a bad byte is: its line, and the characters of
  // that line read so far.
  let line = 1;
  let column = 0;
  const advance = (text: string) => {
    let last = -1;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', last + 1)) {
      line++;
      last = newline;
    }
    column = last === -1 ? column + text.length : text.length - last - 1;
  };
  const invalid = (bytes: Uint8Array): DataSetSyntaxError => {
    const { at, cut } = firstInvalid(bytes);
    advance(decoder.decode(bytes.subarray(0, at)));
    const byte = bytes[at];
    return new DataSetSyntaxError(
      `not valid UTF-8 (line ${line}, column ${column + 1}): ${
        cut || byte === undefined ? 'the file ends inside a character' : `byte ${hex(byte)}`
      }; save the file as UTF-8`,
    );
  };
  let carry: Uint8Array | undefined;
  for await (const chunk of chunks) {
    if (typeof chunk === 'string') {
      advance(chunk);
      yield chunk;
      continue;
    }
    const bytes = carry === undefined ? chunk : Buffer.concat([carry, chunk]);
    const complete = completeLength(bytes);
    let text: string;
    try {
      text = decoder.decode(bytes.subarray(0, complete));
    } catch {
      throw invalid(bytes.subarray(0, complete));
    }
    carry = complete < bytes.length ? Uint8Array.prototype.slice.call(bytes, complete) : undefined;
    advance(text);
    if (text !== '') yield text;
  }
  if (carry !== undefined) throw invalid(carry);
}

/** Chunks of bytes, failing once there are more than CSV_MAX_BYTES in all. */
async function* capped(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > CSV_MAX_BYTES) throw csvTooLarge();
    yield chunk;
  }
}

/**
 * The text of a CSV file (or standard input for `-`), whole: at most CSV_MAX_BYTES, decoded
 * strictly from UTF-8 (a byte order mark is kept, for the parser to skip). A file that
 * cannot be opened fails with a SourceError; one that is too large or not UTF-8 with an
 * ImportError, as a problem of its text.
 */
export async function readCsvText(file: string): Promise<string> {
  const parts: string[] = [];
  try {
    for await (const text of decodeUtf8(capped(await openSource(file)))) {
      parts.push(text);
    }
  } catch (error) {
    if (error instanceof DataSetSyntaxError) throw new ImportError([error.message]);
    throw error;
  }
  return parts.join('');
}

/** The stream again, with what was read ahead first. */
async function* replay(
  head: readonly string[],
  rest: AsyncIterator<string>,
): AsyncGenerator<string> {
  yield* head;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/**
 * The records of a data set stream. NDJSON when `name` ends in `.ndjson` or `.jsonl`, or
 * when the first line alone is a complete `{"organization": …}` object
 * (docs/import-format.md); anything else is JSON.
 */
export async function recordsOfStream(
  name: string,
  stream: AsyncIterable<string>,
): Promise<AsyncIterable<ImportRecord>> {
  if (/\.(ndjson|jsonl)$/i.test(name)) return ndjsonRecords(stream);
  const iterator = stream[Symbol.asyncIterator]();
  const head: string[] = [];
  let text = '';
  let firstLine: string | undefined;
  const start = () => (text.startsWith('\uFEFF') ? text.slice(1) : text).trimStart();
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      firstLine = start();
      break;
    }
    head.push(next.value);
    text += next.value;
    const body = start();
    const newline = body.indexOf('\n');
    if (newline !== -1) {
      firstLine = body.slice(0, newline);
      break;
    }
    if (text.length > FIRST_LINE_LIMIT) break;
  }
  const chunks = replay(head, iterator);
  return firstLine !== undefined && isOrganizationLine(firstLine)
    ? ndjsonRecords(chunks)
    : jsonRecords(chunks);
}
