// The NDJSON form of a data set (docs/import-format.md, "NDJSON"): one JSON object per
// line — the organisation, each merit cycle, each employee with the cycle it belongs to.
// `ndjsonRecords` reads a stream of bytes line by line into the records the loader
// validates and stages as they arrive (records.ts, load.ts).
// Problems name the line and the JSON path in the data set the lines make, e.g.
// `line 7: meritCycles[0].employees[3].email: must be an email address`.
import { fileProblem, inMiB, printable } from './errors.js';
import { type ImportRecord, isObject } from './records.js';
import { decodeStrictly, withoutBom } from './utf8.js';

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

// The longest line (a CR before its LF aside): one record, about half a KiB for an
// employee. 1 MiB leaves room for thousands of columns, yet keeps what a line costs to hold
// and parse (a few times its text) far below the memory an import may use; a longer line
// fails as soon as that much of it has been read (`/dev/zero` has no line ends).
export const MAX_LINE_BYTES = 1024 * 1024;

const tooLarge = (line: number) =>
  fileProblem(
    `line ${line}: a record larger than ${inMiB(MAX_LINE_BYTES)}, the limit for one line`,
  );

/** The lines of a stream of bytes, each with its number, LF cut off. */
async function* linesOf(
  chunks: AsyncIterable<Uint8Array>,
): AsyncGenerator<[line: Buffer, number: number, last: boolean]> {
  let number = 0;
  // The line being read, in the pieces the chunks gave, and their length.
  let pieces: Buffer[] = [];
  let length = 0;
  for await (const chunk of chunks) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    let start = 0;
    for (let end = bytes.indexOf(0x0a); end !== -1; end = bytes.indexOf(0x0a, start)) {
      number++;
      if (length + end - start > MAX_LINE_BYTES + 1) throw tooLarge(number);
      const piece = bytes.subarray(start, end);
      const line = length === 0 ? piece : Buffer.concat([...pieces, piece]);
      pieces = [];
      length = 0;
      yield [line, number, false];
      start = end + 1;
    }
    if (start < bytes.length) {
      pieces.push(bytes.subarray(start));
      length += bytes.length - start;
      if (length > MAX_LINE_BYTES + 1) throw tooLarge(number + 1);
    }
  }
  if (length > 0) yield [Buffer.concat(pieces), number + 1, true];
}

/**
 * The records of an NDJSON data set, read line by line: memory does not grow with it. A
 * cycle line is found again by its id, else by its name (`cycles`: its index).
 */
export async function* ndjsonRecords(
  chunks: AsyncIterable<Uint8Array>,
): AsyncGenerator<ImportRecord> {
  let organization = false;
  let firstLine: number | undefined;
  let problems = 0;
  const cycles = new Map<string, number>();
  const employees: number[] = [];
  const problem = (line: number | undefined, message: string): ImportRecord => {
    problems++;
    return { kind: 'problem', line, message };
  };
  for await (const [withCr, line, last] of linesOf(chunks)) {
    const bytes = withCr.at(-1) === 0x0d ? withCr.subarray(0, -1) : withCr;
    if (bytes.length > MAX_LINE_BYTES) throw tooLarge(line);
    const source = decodeStrictly(bytes, line, last);
    if (source.trim() === '') continue;
    firstLine ??= line;
    let record: unknown;
    try {
      record = JSON.parse(line === 1 ? withoutBom(source) : source);
    } catch (error) {
      throw fileProblem(`line ${line} is not valid JSON: ${printable((error as Error).message)}`);
    }
    const keys = isObject(record) ? Object.keys(record).sort().join() : '';
    if (!isObject(record)) {
      yield problem(line, `must be a JSON object`);
    } else if (keys === 'organization') {
      if (organization) {
        yield problem(line, `a second organization line; a file holds one organisation`);
      } else if (line !== firstLine) {
        yield problem(line, `the organization line must come first`);
      } else {
        organization = true;
        yield { kind: 'root', value: { organization: record.organization, meritCycles: [] }, line };
      }
    } else if (keys === 'meritCycle') {
      const cycle = record.meritCycle;
      const index = employees.length;
      const value: Record<string, unknown> = isObject(cycle) ? { ...cycle } : { value: cycle };
      if (isObject(cycle) && 'employees' in cycle) {
        yield problem(
          line,
          `meritCycle.employees: employees are lines of their own ({"employee": …, "meritCycle": …})`,
        );
      }
      employees.push(0);
      for (const name of [value.id, value.name]) {
        if (typeof name === 'string' && !cycles.has(name)) cycles.set(name, index);
      }
      yield { kind: 'meritCycle', index, value, employees: false, line };
    } else if (keys === 'employee,meritCycle') {
      const cycle =
        typeof record.meritCycle === 'string' ? cycles.get(record.meritCycle) : undefined;
      if (cycle === undefined) {
        yield problem(
          line,
          `meritCycle: ${excerpt(record.meritCycle)} is not the id or name of a meritCycle line above`,
        );
        continue;
      }
      const index = employees[cycle] ?? 0;
      employees[cycle] = index + 1;
      yield { kind: 'employee', cycle, index, value: record.employee, line };
    } else {
      yield problem(
        line,
        `must be {"organization": …}, {"meritCycle": …} or {"employee": …, "meritCycle": "<id or name>"}`,
      );
    }
  }
  if (firstLine === undefined) {
    yield problem(undefined, 'the file is empty: it needs a first line {"organization": …}');
  } else if (!organization && problems === 0) {
    yield problem(1, 'the first line must be {"organization": …}');
  }
}
