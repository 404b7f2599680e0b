// An import file (or standard input) as a stream of text, and its records: NDJSON or JSON,
// told apart by the name or by the start of the stream, never by reading it all.
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
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

/** Opens FILE, or standard input for `-`; fails at once for a missing file or directory. */
export async function openSource(file: string): Promise<AsyncIterable<string>> {
  if (file === '-') {
    process.stdin.setEncoding('utf8');
    return process.stdin as AsyncIterable<string>;
  }
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
  return handle.createReadStream({ encoding: 'utf8', highWaterMark: CHUNK_BYTES });
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
