// A data set as a sequence of records, in the order a file gives them: what the loader
// (load.ts) consumes, whatever the source — an NDJSON file (ndjson.ts), or a data set held
// in memory (recordsOfDataSet): a JSON file once parsed, CSV, the demo. The loader
// validates and stages each record as it arrives, so that no source ever has to hold the
// whole data set.
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
  | { kind: 'problem'; line?: number; message: string };

export type ImportRecords = Iterable<ImportRecord> | AsyncIterable<ImportRecord>;

/** A JSON object (not an array, not null). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The records of a data set held in memory (a parsed JSON file, CSV, the demo, tests): one
 * loader for all. `release`: each employee is let go of once taken (a parsed file's, which
 * nothing else holds), so that memory falls as the import goes.
 */
export function* recordsOfDataSet(dataSet: unknown, release = false): Generator<ImportRecord> {
  if (!isObject(dataSet) || !Array.isArray(dataSet.meritCycles)) {
    yield { kind: 'root', value: dataSet };
    return;
  }
  const { meritCycles, ...top } = dataSet;
  yield { kind: 'root', value: { ...top, meritCycles: [] } };
  for (const [index, cycle] of (meritCycles as unknown[]).entries()) {
    if (isObject(cycle) && Array.isArray(cycle.employees)) {
      // The cycle before its employees, as in NDJSON: their currency columns are checked
      // against its currency.
      const { employees, ...fields } = cycle;
      yield { kind: 'meritCycle', index, value: fields, employees: true };
      for (const [employee, value] of (employees as unknown[]).entries()) {
        yield { kind: 'employee', cycle: index, index: employee, value };
        if (release) (employees as unknown[])[employee] = undefined;
      }
    } else {
      yield { kind: 'meritCycle', index, value: cycle, employees: false };
    }
  }
}
