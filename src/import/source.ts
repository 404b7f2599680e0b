// An import file (or standard input) as bytes, and its records: NDJSON read line by line
// (ndjson.ts), JSON and CSV read whole within a size limit (docs/import-format.md,
// "Limits").
import { type FileHandle, open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { CSV_MAX_BYTES, csvTooLarge } from './csv.js';
import { fileProblem, type ImportError, inMiB, printable, whereIn } from './errors.js';
import { isOrganizationLine, ndjsonRecords } from './ndjson.js';
import { type ImportRecord, isObject, recordsOfDataSet } from './records.js';
import { decodeStrictly, withoutBom } from './utf8.js';
import { type WorkbookInput, workbookKindOf, XLSX_MAX_BYTES } from './workbook-kind.js';

// Chunks of 64 KiB (about 130 employees): large enough that reading costs little, small
// enough that an NDJSON import holds little text at a time.
const CHUNK_BYTES = 64 * 1024;

// A JSON file is read whole and parsed by JSON.parse, which holds the text and every value
// at once: a file just under 24 MiB (59,000 employees) made an import peak at 236 MiB on
// SQLite, 240–244 MiB on PostgreSQL (docs/benchmarks.md). The limit keeps an import well
// under 300 MB; larger data sets are for NDJSON, read line by line in memory that does not
// grow with the file.
export const JSON_MAX_BYTES = 24 * 1024 * 1024;
// How far the format test reads for the first line (an NDJSON organization line is a few
// hundred bytes; a minified JSON file has no line break at all).
const FIRST_LINE_LIMIT = 1024 * 1024;

/** A file that cannot be read: the reason, as the command says it. */
export class SourceError extends Error {
  override name = 'SourceError';
}

/** A file opened for an import, or standard input (`-`). */
export type Source = FileHandle | 'stdin';

/** Opens FILE (or `-`); fails at once for a missing file or a directory. */
export async function openSource(file: string): Promise<Source> {
  if (file === '-') return 'stdin';
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    if (!(await handle.stat()).isDirectory()) return handle;
    await handle.close();
    throw new SourceError('it is a directory');
  } catch (error) {
    if (error instanceof SourceError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new SourceError(code === 'ENOENT' ? 'no such file' : (error as Error).message);
  }
}

export function readableOf(source: Source): Readable {
  return source === 'stdin'
    ? process.stdin
    : source.createReadStream({ highWaterMark: CHUNK_BYTES });
}

/** A whole file of at most `limit` bytes, as text; `tooLarge` once it passes the limit. */
async function readWhole(
  chunks: AsyncIterable<Uint8Array>,
  limit: number,
  tooLarge: () => ImportError,
): Promise<string> {
  return withoutBom(decodeStrictly(await bytesOfWhole(chunks, limit, tooLarge)));
}

/** A whole file of at most `limit` bytes; `tooLarge` once it passes the limit. */
async function bytesOfWhole(
  chunks: AsyncIterable<Uint8Array>,
  limit: number,
  tooLarge: () => ImportError,
): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > limit) throw tooLarge();
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/** The bytes of a CSV file (or standard input for `-`), whole: at most CSV_MAX_BYTES. */
export async function readCsvBytes(file: string): Promise<Buffer> {
  return bytesOfWhole(readableOf(await openSource(file)), CSV_MAX_BYTES, csvTooLarge);
}

/**
 * A spreadsheet file of one cycle's employees (or standard input for `-`): an Excel
 * workbook, told by its first bytes (or its name, .xlsx), is read where it is (standard
 * input: whole, at most XLSX_MAX_BYTES); a CSV file whole, at most CSV_MAX_BYTES.
 */
export async function readSheetSource(
  file: string,
  sheet?: string,
): Promise<Buffer | WorkbookInput> {
  const source = await openSource(file);
  const chunks = readableOf(source)[Symbol.asyncIterator]();
  const first = await chunks.next();
  const head: Buffer = first.done ? Buffer.alloc(0) : first.value;
  const workbook = workbookKindOf(head) !== undefined || /\.xlsx$/i.test(file);
  if (workbook && source !== 'stdin') {
    await chunks.return?.();
    await source.close();
    return { workbook: file, sheet };
  }
  const rest = (async function* () {
    yield head;
    yield* { [Symbol.asyncIterator]: () => chunks };
  })();
  if (workbook) {
    const whole = await bytesOfWhole(rest, XLSX_MAX_BYTES, () =>
      fileProblem(
        `the file is larger than ${inMiB(XLSX_MAX_BYTES)}, the limit for an Excel workbook; give a larger data set as NDJSON`,
      ),
    );
    return { workbook: whole, sheet };
  }
  return bytesOfWhole(rest, CSV_MAX_BYTES, csvTooLarge);
}

/** The text of a CSV file (or standard input for `-`), whole: at most CSV_MAX_BYTES. */
export async function readCsvText(file: string): Promise<string> {
  return withoutBom(decodeStrictly(await readCsvBytes(file)));
}

/**
 * The records of a data set file, from its bytes. NDJSON when `name` ends
 * in `.ndjson` or `.jsonl`, or when the first line alone is a complete `{"organization": …}`
 * object; anything else is JSON.
 */
export async function recordsOfStream(
  name: string,
  bytes: AsyncIterable<Uint8Array>,
): Promise<AsyncIterable<ImportRecord>> {
  if (/\.(ndjson|jsonl)$/i.test(name)) return ndjsonRecords(bytes);
  const iterator = bytes[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let read = 0;
  let firstLine = '';
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    head.push(next.value);
    read += next.value.length;
    // Decoded leniently: this only tells NDJSON from JSON; the text is decoded again.
    const text = withoutBom(Buffer.concat(head).toString()).trimStart();
    const newline = text.indexOf('\n');
    firstLine = newline === -1 ? text : text.slice(0, newline);
    if (newline !== -1 || read > FIRST_LINE_LIMIT) break;
  }
  const rest = (async function* () {
    yield* head;
    yield* { [Symbol.asyncIterator]: () => iterator };
  })();
  return isOrganizationLine(firstLine) ? ndjsonRecords(rest) : jsonRecords(rest);
}

const jsonTooLarge = () =>
  fileProblem(
    `the file is larger than ${inMiB(JSON_MAX_BYTES)}, the limit for a JSON data set, which is read whole; give a larger data set as NDJSON, which is read line by line (docs/import-format.md)`,
  );

const EMPTY =
  'the file is empty: it needs a data set, a JSON object {"organization": …, "meritCycles": […]}';

/**
 * A JSON data set's records: the text parsed whole by JSON.parse, then let go of (nothing
 * here holds it, or the promise of it, while the records are taken), and the values taken
 * record by record, each let go of in turn.
 */
async function* jsonRecords(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<ImportRecord> {
  yield* recordsOfDataSet(parseDataSet(await readWhole(bytes, JSON_MAX_BYTES, jsonTooLarge)), true);
}

function parseDataSet(text: string): object {
  if (text.trim() === '') throw fileProblem(EMPTY);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw syntaxProblem(text, (error as Error).message);
  }
  if (isObject(value)) return value;
  const kind = { object: value === null ? 'null' : 'an array', boolean: 'true or false' };
  const what = kind[typeof value as keyof typeof kind] ?? `a ${typeof value}`;
  throw fileProblem(`(the file): must be a JSON object (a data set), not ${what}`);
}

const END = 'Unexpected end of JSON input';
const positionIn = (message: string) => /at position (\d+)/.exec(message)?.[1];

/** JSON.parse's problem with `text`, said with its line and column. */
function syntaxProblem(text: string, message: string): ImportError {
  let position: number;
  let what = message;
  const stated = positionIn(message);
  if (stated !== undefined) position = Number(stated);
  else if (message === END) position = text.length;
  else {
    // V8 quotes a piece of the text instead of saying where: found as the shortest start
    // of the text that fails other than by ending early. Only for a file that fails.
    let low = 0;
    let high = text.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (failsInside(text.slice(0, middle + 1))) high = middle;
      else low = middle + 1;
    }
    position = low;
    const char = text.charAt(position);
    const shown = printable(char);
    what =
      shown === char
        ? `Unexpected token '${char}'`
        : `Unexpected character ${shown.replace('\\u', 'U+')}`;
  }
  return fileProblem(`not valid JSON (${whereIn(text, position)}): ${printable(what)}`);
}

/** Whether JSON.parse of `start` fails before its end (not only because it ends there). */
function failsInside(start: string): boolean {
  try {
    JSON.parse(start);
    return false;
  } catch (error) {
    const message = (error as Error).message;
    const stated = positionIn(message);
    return message !== END && (stated === undefined || Number(stated) < start.length);
  }
}
