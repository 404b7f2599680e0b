// The NDJSON form of a data set (docs/import-format.md, "NDJSON"): one JSON object per
// line — the organisation, each merit cycle, each employee with the cycle it belongs to —
// assembled into the data set of the JSON format and validated and loaded by the same
// code (parseDataSet, importDataSet). Problems name the line and the JSON path of the
// assembled data set, e.g. `line 7: meritCycles[0].employees[3].email: must be an email
// address`.
//
// Not streamed yet: the lines are read into one data set before anything is written, so
// memory grows with the file, as for a JSON file (docs/benchmarks.md).
import { DataSetSyntaxError, ImportError } from './errors.js';
import { parseDataSet } from './parse.js';
import type { DataSet } from './schema.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when the text looks like NDJSON: its first line alone is `{"organization": …}`. */
export function looksLikeNdjson(text: string): boolean {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const firstLine = body.trimStart().split('\n', 1)[0] ?? '';
  try {
    const first = JSON.parse(firstLine) as unknown;
    return isObject(first) && Object.keys(first).join() === 'organization';
  } catch {
    return false;
  }
}

interface Assembled {
  dataSet: { organization?: unknown; meritCycles: Json[] };
  /** JSON path prefix → the line it came from, e.g. `meritCycles[0].employees[3]` → 7. */
  lines: Map<string, number>;
}

function assemble(text: string): Assembled {
  const dataSet: Assembled['dataSet'] = { meritCycles: [] };
  const lines = new Map<string, number>();
  const problems: string[] = [];
  // A cycle line is found again by its id, else by its name.
  const cycles = new Map<string, { index: number; employees: Json[] }>();
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  body.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const source = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (source.trim() === '') return;
    let record: unknown;
    try {
      record = JSON.parse(source);
    } catch (error) {
      throw new DataSetSyntaxError(
        `line ${line} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const keys = isObject(record) ? Object.keys(record).sort().join() : '';
    if (!isObject(record)) {
      problems.push(`line ${line}: must be a JSON object`);
    } else if (keys === 'organization') {
      if (dataSet.organization !== undefined) {
        problems.push(`line ${line}: a second organization line; a file holds one organisation`);
      } else if (line !== firstRecordLine(body)) {
        problems.push(`line ${line}: the organization line must come first`);
      } else {
        dataSet.organization = record.organization;
        lines.set('organization', line);
      }
    } else if (keys === 'meritCycle') {
      const cycle = record.meritCycle;
      const cycleIndex = dataSet.meritCycles.length;
      const entry: Json = isObject(cycle) ? { ...cycle } : { value: cycle };
      if (isObject(cycle) && 'employees' in cycle) {
        problems.push(
          `line ${line}: meritCycle.employees: employees are lines of their own ({"employee": …, "meritCycle": …})`,
        );
      }
      dataSet.meritCycles.push(entry);
      lines.set(`meritCycles[${cycleIndex}]`, line);
      const employees: Json[] = [];
      for (const name of [entry.id, entry.name]) {
        if (typeof name === 'string' && !cycles.has(name)) {
          cycles.set(name, { index: cycleIndex, employees });
        }
      }
    } else if (keys === 'employee,meritCycle') {
      const cycle =
        typeof record.meritCycle === 'string' ? cycles.get(record.meritCycle) : undefined;
      if (!cycle) {
        problems.push(
          `line ${line}: meritCycle: ${JSON.stringify(record.meritCycle)} is not the id or name of a meritCycle line above`,
        );
        return;
      }
      const target = dataSet.meritCycles[cycle.index];
      if (target && target.employees === undefined) target.employees = cycle.employees;
      lines.set(`meritCycles[${cycle.index}].employees[${cycle.employees.length}]`, line);
      cycle.employees.push(record.employee as Json);
    } else {
      problems.push(
        `line ${line}: must be {"organization": …}, {"meritCycle": …} or {"employee": …, "meritCycle": "<id or name>"}`,
      );
    }
  });
  if (dataSet.organization === undefined && problems.length === 0) {
    problems.push('line 1: the first line must be {"organization": …}');
  }
  if (problems.length > 0) throw new ImportError(problems.slice(0, 50));
  return { dataSet, lines };
}

function firstRecordLine(body: string): number {
  const index = body.split('\n').findIndex((line) => line.trim() !== '');
  return index + 1;
}

/** The line a problem's JSON path comes from: the longest known prefix of the path. */
function lineOf(problem: string, lines: Map<string, number>): number | undefined {
  const path = problem.split(':', 1)[0] ?? '';
  let best: { length: number; line: number } | undefined;
  for (const [prefix, line] of lines) {
    const matches =
      path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
    if (matches && (!best || prefix.length > best.length)) best = { length: prefix.length, line };
  }
  return best?.line;
}

/** An NDJSON data set, validated; problems name their line and JSON path. */
export function parseNdjsonDataSet(text: string): DataSet {
  const { dataSet, lines } = assemble(text);
  try {
    return parseDataSet(dataSet);
  } catch (error) {
    if (!(error instanceof ImportError)) throw error;
    throw new ImportError(
      error.problems.map((problem) => {
        const line = lineOf(problem, lines);
        return line === undefined ? problem : `line ${line}: ${problem}`;
      }),
    );
  }
}
