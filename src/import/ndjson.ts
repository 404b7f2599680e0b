// The NDJSON form of a data set (docs/import-format.md, "NDJSON"): one JSON object per
// line — the organisation, each merit cycle, each employee with the cycle it belongs to.
// `ndjsonRecords` reads a stream line by line into the records the loader validates and
// stages as they arrive (records.ts, load.ts), so memory does not grow with the file.
// Problems name the line and the JSON path in the data set the lines make, e.g.
// `line 7: meritCycles[0].employees[3].email: must be an email address`.
import { DataSetSyntaxError, MAX_RECORD_CHARS, MAX_RECORD_TEXT, printable } from './errors.js';
import type { ImportRecord } from './records.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value of the file quoted in a message: as JSON, at most 100 characters of it. */
function excerpt(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return printable(json.length > 100 ? `${json.slice(0, 99)}…` : json);
}

/** True when a first line alone is `{"organization": …}`: the test of the NDJSON form. */
export function isOrganizationLine(line: string): boolean {
  try {
    const first = JSON.parse(line) as unknown;
    return isObject(first) && Object.keys(first).join() === 'organization';
  } catch {
    return false;
  }
}

/** The lines of a file, one at a time, into records; the rules of the NDJSON form. */
class NdjsonLines {
  private organization = false;
  private firstRecordLine: number | undefined;
  private problems = 0;
  /** A cycle line is found again by its id, else by its name: its index, its employees. */
  private readonly cycles = new Map<string, number>();
  private readonly employees: number[] = [];

  *line(raw: string, line: number): Generator<ImportRecord> {
    const source = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (source.length > MAX_RECORD_CHARS) throw tooLarge(line);
    if (source.trim() === '') return;
    this.firstRecordLine ??= line;
    let record: unknown;
    try {
      record = JSON.parse(source);
    } catch (error) {
      throw new DataSetSyntaxError(
        `line ${line} is not valid JSON: ${printable(error instanceof Error ? error.message : String(error))}`,
      );
    }
    const keys = isObject(record) ? Object.keys(record).sort().join() : '';
    if (!isObject(record)) {
      yield this.problem(`line ${line}: must be a JSON object`);
    } else if (keys === 'organization') {
      if (this.organization) {
        yield this.problem(
          `line ${line}: a second organization line; a file holds one organisation`,
        );
      } else if (line !== this.firstRecordLine) {
        yield this.problem(`line ${line}: the organization line must come first`);
      } else {
        this.organization = true;
        yield { kind: 'root', value: { organization: record.organization, meritCycles: [] }, line };
      }
    } else if (keys === 'meritCycle') {
      const cycle = record.meritCycle;
      const index = this.employees.length;
      const value: Json = isObject(cycle) ? { ...cycle } : { value: cycle };
      if (isObject(cycle) && 'employees' in cycle) {
        yield this.problem(
          `line ${line}: meritCycle.employees: employees are lines of their own ({"employee": …, "meritCycle": …})`,
        );
      }
      this.employees.push(0);
      for (const name of [value.id, value.name]) {
        if (typeof name === 'string' && !this.cycles.has(name)) this.cycles.set(name, index);
      }
      yield { kind: 'meritCycle', index, value, employees: false, line };
    } else if (keys === 'employee,meritCycle') {
      const cycle =
        typeof record.meritCycle === 'string' ? this.cycles.get(record.meritCycle) : undefined;
      if (cycle === undefined) {
        yield this.problem(
          `line ${line}: meritCycle: ${excerpt(record.meritCycle)} is not the id or name of a meritCycle line above`,
        );
        return;
      }
      const index = this.employees[cycle] ?? 0;
      this.employees[cycle] = index + 1;
      yield { kind: 'employee', cycle, index, value: record.employee, line };
    } else {
      yield this.problem(
        `line ${line}: must be {"organization": …}, {"meritCycle": …} or {"employee": …, "meritCycle": "<id or name>"}`,
      );
    }
  }

  *end(): Generator<ImportRecord> {
    if (this.firstRecordLine === undefined) {
      yield this.problem('the file is empty: it needs a first line {"organization": …}');
    } else if (!this.organization && this.problems === 0) {
      yield this.problem('line 1: the first line must be {"organization": …}');
    }
  }

  private problem(message: string): ImportRecord {
    this.problems++;
    return { kind: 'problem', message };
  }
}

/** `line N: …` for a line longer than a record may be. */
function tooLarge(line: number): DataSetSyntaxError {
  return new DataSetSyntaxError(
    `line ${line}: a record larger than ${MAX_RECORD_TEXT}, the limit for one line`,
  );
}

/**
 * The records of an NDJSON data set, read from a stream of text line by line. A line may be
 * at most MAX_RECORD_CHARS (a CR before its LF aside): a longer one fails as soon as that
 * much of it has been read, so that no more than one line is ever held.
 */
export async function* ndjsonRecords(chunks: AsyncIterable<string>): AsyncGenerator<ImportRecord> {
  const lines = new NdjsonLines();
  let number = 0;
  // The line being read, in the pieces the chunks gave, and their length.
  let pieces: string[] = [];
  let length = 0;
  let first = true;
  for await (const chunk of chunks) {
    let text = chunk;
    if (first && text !== '') {
      if (text.startsWith('\uFEFF')) text = text.slice(1);
      first = false;
    }
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      number++;
      if (length + newline - start > MAX_RECORD_CHARS + 1) throw tooLarge(number);
      pieces.push(text.slice(start, newline));
      const line = pieces.length === 1 ? (pieces[0] as string) : pieces.join('');
      pieces = [];
      length = 0;
      yield* lines.line(line, number);
      start = newline + 1;
    }
    if (start < text.length) {
      pieces.push(text.slice(start));
      length += text.length - start;
      if (length > MAX_RECORD_CHARS + 1) throw tooLarge(number + 1);
    }
  }
  if (length > 0) yield* lines.line(pieces.join(''), number + 1);
  yield* lines.end();
}
