// A JSON data set read as a stream: the records of the file (records.ts) in file order,
// each employee as soon as its closing brace has been read, so that a file of any size
// is read in memory bounded by its largest record.
//
// Only the frame of the data set is tokenized here — the top object, the `meritCycles`
// array, each cycle object and its `employees` array. Every other value (an employee, the
// organisation, a cycle's field) is cut out of the text whole and given to JSON.parse, so
// values mean exactly what they mean to JSON.parse: numbers, escapes, duplicate keys (the
// last wins), `__proto__` as an ordinary key. Keys of the frame are set the same way. A
// byte order mark at the start is skipped (RFC 8259 allows a parser to ignore it).
//
// Each value is scanned once as its text arrives (ValueScan goes on where it stopped), so
// reading takes time linear in the file; a value may be at most MAX_RECORD_CHARS of text,
// checked as it is read, so memory stays bounded whatever the file holds
// (docs/import-format.md, "Limits").
//
// Syntax errors say where, as `JSON.parse` of the whole text did before: `not valid JSON
// (line 3, column 3): …`; a character that cannot start a value fails as soon as it is seen.
import {
  DataSetSyntaxError,
  jsonPath,
  MAX_RECORD_CHARS,
  MAX_RECORD_TEXT,
  printable,
} from './errors.js';
import type { ImportRecord } from './records.js';

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const BOM = 0xfeff;
// The first letters of true, false and null.
const LETTER_T = 0x74;
const LETTER_F = 0x66;
const LETTER_N = 0x6e;

const isSpace = (code: number) => code === SPACE || code === LF || code === CR || code === TAB;

/** Characters that can start a JSON value: `"`, `{`, `[`, `-`, a digit, `t`, `f`, `n`. */
function startsValue(code: number): boolean {
  return (
    code === QUOTE ||
    code === OPEN_OBJECT ||
    code === OPEN_ARRAY ||
    code === MINUS ||
    (code >= DIGIT_0 && code <= DIGIT_9) ||
    code === LETTER_T ||
    code === LETTER_F ||
    code === LETTER_N
  );
}

/** Characters of a number, true, false or null (and of misspellings of them). */
function inScalar(code: number): boolean {
  return (
    (code >= DIGIT_0 && code <= DIGIT_9) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    code === MINUS ||
    code === PLUS ||
    code === DOT
  );
}

/**
 * Finds the end of one JSON value as its text arrives: each call goes on from where the
 * last one stopped, so a value is scanned once however many chunks it spans. Brackets and
 * strings are only counted here; JSON.parse checks the value.
 */
class ValueScan {
  /** How much of the value has been scanned, from its first character. */
  private scanned = 1;
  private depth: number;
  private inString: boolean;
  readonly scalar: boolean;

  constructor(first: number) {
    this.inString = first === QUOTE;
    this.depth = first === OPEN_OBJECT || first === OPEN_ARRAY ? 1 : 0;
    this.scalar = !this.inString && this.depth === 0;
  }

  /**
   * The end (exclusive) in `text` of the value that starts at `start`, or -1 when the text
   * ends first. `final`: no more text follows (a number at the end of the input ends there).
   */
  end(text: string, start: number, final: boolean): number {
    let i = start + this.scanned;
    const length = text.length;
    if (this.scalar) {
      while (i < length && inScalar(text.charCodeAt(i))) i++;
      this.scanned = i - start;
      return i < length || final ? i : -1;
    }
    for (;;) {
      if (this.inString) {
        const quote = text.indexOf('"', i);
        if (quote === -1) break;
        // The whole value is held, so the backslashes before a quote are all there (a
        // string's opening quote stops the count).
        let backslashes = 0;
        while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
        i = quote + 1;
        if (backslashes % 2 === 0) {
          this.inString = false;
          if (this.depth === 0) return i;
        }
        continue;
      }
      for (; i < length; i++) {
        const code = text.charCodeAt(i);
        if (code === QUOTE) {
          this.inString = true;
          break;
        }
        if (code === OPEN_OBJECT || code === OPEN_ARRAY) this.depth++;
        else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
          this.depth--;
          if (this.depth === 0) return i + 1;
        }
      }
      if (i >= length) break;
      i++;
    }
    this.scanned = length - start;
    return -1;
  }
}

/** Where a value is in the data set, for a record that is too large: said when needed. */
export interface Place {
  path: () => string;
  /** What the record is: `one employee`, … (the limit applies to it). */
  record: string;
}

/** Sets a key as JSON.parse does: an own property, even `__proto__`; a repeat replaces. */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/** The text of a stream, read chunk by chunk; what has been consumed is dropped. */
class JsonReader {
  private text = '';
  /** The position of the next character in `text`. */
  pos = 0;
  /** Where `text` starts in the whole stream, and what of the lines was dropped before. */
  private base = 0;
  private droppedLines = 0;
  private droppedLineStart = -1;
  private ended = false;

  constructor(private readonly chunks: AsyncIterator<string>) {}

  /** Appends the next chunk; false at the end of the stream. */
  private async more(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.chunks.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    if (this.pos > 0) {
      // Drop what has been read, remembering its lines for positions in messages.
      const dropped = this.text.slice(0, this.pos);
      let newline = dropped.indexOf('\n');
      while (newline !== -1) {
        this.droppedLines++;
        this.droppedLineStart = this.base + newline;
        newline = dropped.indexOf('\n', newline + 1);
      }
      this.base += this.pos;
      this.text = this.text.slice(this.pos);
      this.pos = 0;
    }
    this.text += next.value;
    return true;
  }

  /** The next character that is not white space (undefined at the end), not consumed. */
  async peek(): Promise<number | undefined> {
    for (;;) {
      while (this.pos < this.text.length) {
        const code = this.text.charCodeAt(this.pos);
        if (isSpace(code) || (code === BOM && this.base + this.pos === 0)) this.pos++;
        else return code;
      }
      if (!(await this.more())) return undefined;
    }
  }

  /** The position of the next character in the whole stream. */
  get position(): number {
    return this.base + this.pos;
  }

  /**
   * The next value, whole, as JSON.parse reads it. Its text may be at most `limit`
   * characters (the rest of its record's MAX_RECORD_CHARS): a larger one fails as soon as
   * that much has been read, so that no more than a record is ever held.
   */
  async value(place: Place, limit = MAX_RECORD_CHARS): Promise<unknown> {
    const first = await this.peek();
    if (first === undefined) throw this.endError();
    const start = this.position;
    if (!startsValue(first)) throw this.unexpected(first, start);
    const scan = new ValueScan(first);
    for (;;) {
      const end = scan.end(this.text, this.pos, this.ended);
      if (end !== -1) {
        if (end - this.pos > limit) throw this.tooLarge(place, start);
        return this.parse(this.text.slice(this.pos, end), end);
      }
      if (this.text.length - this.pos > limit) throw this.tooLarge(place, start);
      if (!(await this.more()) && !scan.scalar) throw this.endError();
    }
  }

  /** JSON.parse of the text of the value at `pos`, which ends at `end`; consumed. */
  private parse(source: string, end: number): unknown {
    const start = this.position;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const at = /at position (\d+)/.exec(message)?.[1];
      const position = start + (at === undefined ? 0 : Number(at));
      throw this.error(message.replace(/at position \d+/, `at position ${position}`), position);
    }
    this.pos = end;
    return value;
  }

  async key(place: Place, limit = MAX_RECORD_CHARS): Promise<string> {
    const next = await this.peek();
    if (next === undefined) throw this.endError();
    if (next !== QUOTE) throw this.expected('double-quoted property name');
    const key = (await this.value(place, limit)) as string;
    if ((await this.peek()) !== COLON) throw this.expected("':' after property name");
    this.pos++;
    return key;
  }

  /** Consumes `,` (true, more follows) or the closing bracket (false), or fails. */
  async separator(close: number, what: string): Promise<boolean> {
    const next = await this.peek();
    if (next === COMMA) {
      this.pos++;
      return true;
    }
    if (next === close) {
      this.pos++;
      return false;
    }
    if (next === undefined) throw this.endError();
    throw this.expected(what);
  }

  async end(): Promise<void> {
    if ((await this.peek()) !== undefined) {
      throw this.error(
        `Unexpected non-whitespace character after JSON at position ${this.base + this.pos}`,
        this.base + this.pos,
      );
    }
  }

  expected(what: string): DataSetSyntaxError {
    const position = this.base + this.pos;
    return this.error(`Expected ${what} in JSON at position ${position}`, position);
  }

  private endError(): DataSetSyntaxError {
    return this.error('Unexpected end of JSON input', this.base + this.text.length);
  }

  /** A character that cannot start a value where one must start. */
  unexpected(code: number, position: number): DataSetSyntaxError {
    const char = String.fromCharCode(code);
    const shown = printable(char);
    return this.error(
      shown === char
        ? `Unexpected token '${char}'`
        : `Unexpected character ${shown.replace('\\u', 'U+')}`,
      position,
    );
  }

  /** A record that would pass MAX_RECORD_CHARS: `PATH (line L, column C): …`. */
  tooLarge(place: Place, position: number): DataSetSyntaxError {
    return new DataSetSyntaxError(
      `${place.path()} (${this.lineAndColumn(position)}): a record larger than ${MAX_RECORD_TEXT}, the limit for ${place.record}`,
    );
  }

  /** `not valid JSON (line L, column C): …`, the line and column of a stream position. */
  error(message: string, position: number): DataSetSyntaxError {
    return new DataSetSyntaxError(
      `not valid JSON (${this.lineAndColumn(position)}): ${printable(message)}`,
    );
  }

  /** `line L, column C` of a position in the stream (within what is held). */
  private lineAndColumn(position: number): string {
    let line = this.droppedLines + 1;
    let lineStart = this.droppedLineStart;
    const upTo = Math.min(position - this.base, this.text.length);
    let newline = this.text.indexOf('\n');
    while (newline !== -1 && newline < upTo) {
      line++;
      lineStart = this.base + newline;
      newline = this.text.indexOf('\n', newline + 1);
    }
    return `line ${line}, column ${position - lineStart}`;
  }
}

/**
 * A record of the frame — the top object without `meritCycles`, a cycle without its
 * `employees` — whose values are read one by one: together they may be at most
 * MAX_RECORD_CHARS, counted from its opening brace, less the lists streamed out of it.
 */
class FrameRecord {
  private readonly start: number;
  private excluded = 0;

  constructor(
    private readonly reader: JsonReader,
    private readonly path: readonly PropertyKey[],
    private readonly record: string,
  ) {
    this.start = reader.position;
  }

  /** What the record's next key or value may take of the limit. */
  get remaining(): number {
    return MAX_RECORD_CHARS - (this.reader.position - this.start - this.excluded);
  }

  /** A list that began at `from` and has just been read is no part of the record. */
  exclude(from: number): void {
    this.excluded += this.reader.position - from;
  }

  place(key?: string): Place {
    const path = key === undefined ? this.path : [...this.path, key];
    return { path: () => jsonPath(path), record: this.record };
  }

  key(): Promise<string> {
    return this.reader.key(this.place(), this.remaining);
  }

  value(key: string): Promise<unknown> {
    return this.reader.value(this.place(key), this.remaining);
  }
}

const EMPTY =
  'the file is empty: it needs a data set, a JSON object {"organization": …, "meritCycles": […]}';

/** What a value that starts with `code` is, to say what the top of a file is instead. */
function kindOfValue(code: number): string {
  if (code === OPEN_ARRAY) return 'an array';
  if (code === QUOTE) return 'a string';
  if (code === LETTER_T || code === LETTER_F) return 'true or false';
  if (code === LETTER_N) return 'null';
  return 'a number';
}

/** The records of a JSON data set, read from a stream of text. */
export async function* jsonRecords(chunks: AsyncIterable<string>): AsyncGenerator<ImportRecord> {
  const reader = new JsonReader(chunks[Symbol.asyncIterator]());
  const first = await reader.peek();
  if (first === undefined) {
    yield { kind: 'problem', message: EMPTY };
    return;
  }
  if (first !== OPEN_OBJECT) {
    // Not an object: the file is no data set, whatever follows. An array or a string is
    // not read further (it may be of any size); a number, true, false or null must be
    // JSON, then be all there is.
    if (!startsValue(first)) throw reader.unexpected(first, reader.position);
    if (first !== OPEN_ARRAY && first !== QUOTE) {
      await reader.value({ path: () => '(the file)', record: 'the data set' });
      await reader.end();
    }
    yield {
      kind: 'problem',
      message: `(the file): must be a JSON object (a data set), not ${kindOfValue(first)}`,
    };
    return;
  }
  const record = new FrameRecord(reader, [], 'the data set without its merit cycles');
  reader.pos++;
  const top: Record<string, unknown> = {};
  let streamed = false;
  if ((await reader.peek()) === CLOSE_OBJECT) reader.pos++;
  else {
    do {
      const key = await record.key();
      if (key === 'meritCycles' && (await reader.peek()) === OPEN_ARRAY) {
        if (streamed) {
          yield { kind: 'problem', message: 'meritCycles: given twice; a data set has one list' };
        }
        const from = reader.position;
        yield* meritCycles(reader, !streamed);
        record.exclude(from);
        streamed = true;
        setKey(top, key, []);
      } else setKey(top, key, await record.value(key));
    } while (await reader.separator(CLOSE_OBJECT, "',' or '}' after property value"));
  }
  await reader.end();
  yield { kind: 'root', value: top };
}

async function* meritCycles(reader: JsonReader, emit: boolean): AsyncGenerator<ImportRecord> {
  reader.pos++;
  if ((await reader.peek()) === CLOSE_ARRAY) {
    reader.pos++;
    return;
  }
  let index = 0;
  do {
    if ((await reader.peek()) === OPEN_OBJECT) {
      for await (const record of meritCycle(reader, index)) if (emit) yield record;
    } else {
      const path = ['meritCycles', index];
      const value = await reader.value({ path: () => jsonPath(path), record: 'one merit cycle' });
      if (emit) yield { kind: 'meritCycle', index, value, employees: false };
    }
    index++;
  } while (await reader.separator(CLOSE_ARRAY, "',' or ']' after array element"));
}

async function* meritCycle(reader: JsonReader, index: number): AsyncGenerator<ImportRecord> {
  const record = new FrameRecord(
    reader,
    ['meritCycles', index],
    'a merit cycle without its employees',
  );
  reader.pos++;
  const cycle: Record<string, unknown> = {};
  let employees = false;
  if ((await reader.peek()) === CLOSE_OBJECT) reader.pos++;
  else {
    do {
      const key = await record.key();
      if (key === 'employees' && (await reader.peek()) === OPEN_ARRAY) {
        if (employees) {
          yield {
            kind: 'problem',
            message: `meritCycles[${index}].employees: given twice; a merit cycle has one list`,
          };
        }
        const from = reader.position;
        reader.pos++;
        let employee = 0;
        if ((await reader.peek()) === CLOSE_ARRAY) reader.pos++;
        else {
          do {
            const path = ['meritCycles', index, 'employees', employee];
            const value = await reader.value({
              path: () => jsonPath(path),
              record: 'one employee',
            });
            if (!employees) yield { kind: 'employee', cycle: index, index: employee, value };
            employee++;
          } while (await reader.separator(CLOSE_ARRAY, "',' or ']' after array element"));
        }
        record.exclude(from);
        employees = true;
        // A list given after a value that is not one replaces it, as in JSON.parse.
        delete cycle.employees;
      } else setKey(cycle, key, await record.value(key));
    } while (await reader.separator(CLOSE_OBJECT, "',' or '}' after property value"));
  }
  yield { kind: 'meritCycle', index, value: cycle, employees };
}
