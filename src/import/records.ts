// A data set as a sequence of records, in the order a file gives them: what the loader
// (load.ts) consumes, whatever the source — a JSON file (json-stream.ts), an NDJSON file
// (ndjson.ts), a CSV file or a data set held in memory (recordsOfDataSet). The loader
// validates and stages each record as it arrives, so that no source ever has to hold the
// whole data set.
import { MAX_PROBLEMS } from './errors.js';

export type ImportRecord =
  /**
   * The top of the data set: `organization`, and `meritCycles` as `[]` when the cycles
   * come as records of their own (any other value, or other keys, are reported as the
   * whole data set's would be). A file whose top is not an object is this one record.
   */
  | { kind: 'root'; value: unknown; line?: number }
  /**
   * Merit cycle `index`, without its employees. `employees` is true when the file gives
   * the cycle a list of employees (even an empty one): only then are the cycle's stored
   * employees matched against the file, and pruned with --prune. NDJSON cycles get their
   * list from their employee lines.
   */
  | { kind: 'meritCycle'; index: number; value: unknown; employees: boolean; line?: number }
  /** Employee `index` of merit cycle `cycle` (which may come before or after it). */
  | { kind: 'employee'; cycle: number; index: number; value: unknown; line?: number }
  /** Input that is no record of the format (NDJSON): reported instead of anything else. */
  | { kind: 'problem'; message: string };

export type ImportRecords = Iterable<ImportRecord> | AsyncIterable<ImportRecord>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The records of a data set held in memory (the demo, CSV, tests): one loader for all. */
export function* recordsOfDataSet(dataSet: unknown): Generator<ImportRecord> {
  if (!isObject(dataSet) || !Array.isArray(dataSet.meritCycles)) {
    yield { kind: 'root', value: dataSet };
    return;
  }
  const { meritCycles, ...top } = dataSet;
  yield { kind: 'root', value: { ...top, meritCycles: [] } };
  for (const [index, cycle] of (meritCycles as unknown[]).entries()) {
    if (isObject(cycle) && Array.isArray(cycle.employees)) {
      const { employees, ...fields } = cycle;
      for (const [employee, value] of (employees as unknown[]).entries()) {
        yield { kind: 'employee', cycle: index, index: employee, value };
      }
      yield { kind: 'meritCycle', index, value: fields, employees: true };
    } else {
      yield { kind: 'meritCycle', index, value: cycle, employees: false };
    }
  }
}

/**
 * Where a problem goes in the report: problems are listed in the order of the data set
 * (the organisation; each cycle's fields, its employees, its own checks; then checks
 * across cycles; docs/import-format.md), whatever order the file gave the records in.
 * Compared element by element.
 */
export type SortKey = readonly number[];

function compare(a: SortKey, b: SortKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    return x - y;
  }
  return 0;
}

export interface ProblemListState {
  kept: { key: SortKey; problem: string }[];
  total: number;
}

/**
 * The problems of one import: only the first MAX_PROBLEMS in report order are kept (a
 * file with a problem on every line must not fill memory), and how many there were.
 */
export class ProblemList {
  private readonly kept: { key: SortKey; problem: string }[];
  total: number;

  constructor(state: ProblemListState = { kept: [], total: 0 }) {
    this.kept = state.kept;
    this.total = state.total;
  }

  /** As plain data (a worker thread's list crosses to the import's thread this way). */
  state(): ProblemListState {
    return { kept: this.kept, total: this.total };
  }

  add(key: SortKey, problem: string): void {
    this.total++;
    // After any equal key: problems of one record keep their order.
    let low = 0;
    let high = this.kept.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compare((this.kept[middle] as { key: SortKey }).key, key) <= 0) low = middle + 1;
      else high = middle;
    }
    if (low >= MAX_PROBLEMS) return;
    this.kept.splice(low, 0, { key, problem });
    if (this.kept.length > MAX_PROBLEMS) this.kept.pop();
  }

  /** Counts problems that were found but not added (their keys come after the kept). */
  addUncounted(count: number): void {
    this.total += count;
  }

  get problems(): string[] {
    return this.kept.map(({ problem }) => problem);
  }
}
