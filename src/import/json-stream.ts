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
// Syntax errors say where, as `JSON.parse` of the whole text did before: `not valid JSON
// (line 3, column 3): …`.
import { DataSetSyntaxError } from './errors.js';
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
const BOM = 0xfeff;

const isSpace = (code: number) => code === SPACE || code === LF || code === CR || code === TAB;

/**
 * The end (exclusive) of the JSON value that starts at `start`, or -1 when the text ends
 * first. Brackets and strings are only counted here; JSON.parse checks the value.
 */
function valueEnd(text: string, start: number, final: boolean): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        const end = stringEnd(text, i);
        if (end === -1) return -1;
        i = end - 1;
      } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) depth++;
      else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isSpace(code) || code === COMMA || code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      return i;
    }
  }
  return final ? text.length : -1;
}

function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
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

  /** The next value, whole, as JSON.parse reads it. */
  async value(): Promise<unknown> {
    if ((await this.peek()) === undefined) throw this.endError();
    for (;;) {
      const end = valueEnd(this.text, this.pos, this.ended);
      if (end !== -1) {
        const start = this.pos;
        if (end === start) {
          throw this.error(`Unexpected token '${this.text[start]}'`, this.base + start);
        }
        const source = this.text.slice(start, end);
        let value: unknown;
        try {
          value = JSON.parse(source);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          const at = /at position (\d+)/.exec(message)?.[1];
          const position = this.base + start + (at === undefined ? 0 : Number(at));
          throw this.error(message.replace(/at position \d+/, `at position ${position}`), position);
        }
        this.pos = end;
        return value;
      }
      if (!(await this.more())) throw this.endError();
    }
  }

  async key(): Promise<string> {
    const next = await this.peek();
    if (next === undefined) throw this.endError();
    if (next !== QUOTE) throw this.expected('double-quoted property name');
    const key = (await this.value()) as string;
    if ((await this.peek()) !== 0x3a) throw this.expected("':' after property name");
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

  /** `not valid JSON (line L, column C): …`, the line and column of a stream position. */
  error(message: string, position: number): DataSetSyntaxError {
    let line = this.droppedLines + 1;
    let lineStart = this.droppedLineStart;
    const upTo = Math.min(position - this.base, this.text.length);
    let newline = this.text.indexOf('\n');
    while (newline !== -1 && newline < upTo) {
      line++;
      lineStart = this.base + newline;
      newline = this.text.indexOf('\n', newline + 1);
    }
    return new DataSetSyntaxError(
      `not valid JSON (line ${line}, column ${position - lineStart}): ${message}`,
    );
  }
}

/** The records of a JSON data set, read from a stream of text. */
export async function* jsonRecords(chunks: AsyncIterable<string>): AsyncGenerator<ImportRecord> {
  const reader = new JsonReader(chunks[Symbol.asyncIterator]());
  if ((await reader.peek()) !== OPEN_OBJECT) {
    // Not an object: one value, reported as a data set that is not one.
    const value = await reader.value();
    await reader.end();
    yield { kind: 'root', value };
    return;
  }
  reader.pos++;
  const top: Record<string, unknown> = {};
  let streamed = false;
  if ((await reader.peek()) === CLOSE_OBJECT) reader.pos++;
  else {
    do {
      const key = await reader.key();
      if (key === 'meritCycles' && (await reader.peek()) === OPEN_ARRAY) {
        if (streamed) {
          yield { kind: 'problem', message: 'meritCycles: given twice; a data set has one list' };
        }
        yield* meritCycles(reader, !streamed);
        streamed = true;
        setKey(top, key, []);
      } else setKey(top, key, await reader.value());
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
      const value = await reader.value();
      if (emit) yield { kind: 'meritCycle', index, value, employees: false };
    }
    index++;
  } while (await reader.separator(CLOSE_ARRAY, "',' or ']' after array element"));
}

async function* meritCycle(reader: JsonReader, index: number): AsyncGenerator<ImportRecord> {
  reader.pos++;
  const cycle: Record<string, unknown> = {};
  let employees = false;
  if ((await reader.peek()) === CLOSE_OBJECT) reader.pos++;
  else {
    do {
      const key = await reader.key();
      if (key === 'employees' && (await reader.peek()) === OPEN_ARRAY) {
        if (employees) {
          yield {
            kind: 'problem',
            message: `meritCycles[${index}].employees: given twice; a merit cycle has one list`,
          };
        }
        reader.pos++;
        let employee = 0;
        if ((await reader.peek()) === CLOSE_ARRAY) reader.pos++;
        else {
          do {
            const value = await reader.value();
            if (!employees) yield { kind: 'employee', cycle: index, index: employee, value };
            employee++;
          } while (await reader.separator(CLOSE_ARRAY, "',' or ']' after array element"));
        }
        employees = true;
        // A list given after a value that is not one replaces it, as in JSON.parse.
        delete cycle.employees;
      } else setKey(cycle, key, await reader.value());
    } while (await reader.separator(CLOSE_OBJECT, "',' or '}' after property value"));
  }
  yield { kind: 'meritCycle', index, value: cycle, employees };
}
