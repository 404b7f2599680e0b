// Step 1 of an import (load.ts): each record validated once, as it arrives, by the record
// schemas of schema.ts; each valid employee turned into a staging row, handed on in
// batches (staging.ts). The organisation and the merit cycles (a few hundred at most) are
// kept; employees never are. No database here: for a file this runs in a worker thread
// (intake-worker.ts) while the import's own thread writes the batches.
import { noteColumns, type SeenColumn } from '../columns/schema.js';
import type { Dialect } from '../db/connect.js';
import { FlatLineWriter } from '../export/flat-line.js';
import { newId } from '../ids.js';
import {
  fileProblem,
  MAX_PROBLEMS,
  type Path,
  type Problem,
  ProblemList,
  problemsOfIssues,
} from './errors.js';
import type { ImportRecord, ImportRecords } from './records.js';
import {
  employeeSchema,
  type ImportEmployee,
  type ImportMeritCycleRecord,
  type ImportRoot,
  MeritCycleRecord,
  Root,
} from './schema.js';
import { BATCH_ROWS, type StagedBatch, type StagedRow, toBatch } from './staging.js';
import { storedBodyTail } from './stored-body.js';

// The merit cycles of a data set are held in memory until the merge (a few hundred bytes
// each); so that no file can grow that without bound, a data set (one organisation) has at
// most this many. A real organisation runs a few cycles a year.
export const MAX_MERIT_CYCLES = 10_000;

export interface CycleState {
  /** The validated cycle, once its record has come and passed. */
  cycle?: ImportMeritCycleRecord;
  line?: number;
  /** The file gives the cycle a list of employees (matched, and pruned with --prune). */
  listsEmployees: boolean;
  /** Employee records of the cycle so far. */
  employees: number;
  /** A record of the cycle (its own or an employee's) has a problem. */
  faulty: boolean;
  /** The columns of its valid employees so far, by key: the cycle's column schema. */
  columns: Map<string, SeenColumn>;
}

/** What the intake found: plain data, so that it can cross from a worker thread. */
export interface IntakeOutcome {
  problems: { kept: Problem[]; total: number };
  /**
   * Problems of the input's shape (NDJSON lines that are no record), in line order:
   * reported alone. The first kept (MAX_PROBLEMS, or as asked), and how many there were.
   */
  shapeProblems: Problem[];
  shapeProblemCount: number;
  /** Problems of single records: checks across records are not made over them. */
  recordProblems: number;
  root?: ImportRoot;
  rootSeen: boolean;
  cycles: CycleState[];
}

/** Where full batches go: written, or sent to the thread that writes them. */
export type Stage = (batch: StagedBatch) => Promise<void>;

/**
 * Takes every record: validates it, keeps what the merge needs, and stages each valid
 * employee, `stage` awaited for each full batch (and the last). Keeps the first
 * `keepProblems` problems (of records, and of the input's shape) in report order.
 */
export async function takeRecords(
  records: ImportRecords,
  dialect: Dialect,
  stage: Stage,
  keepProblems = MAX_PROBLEMS,
): Promise<IntakeOutcome> {
  const problems = new ProblemList([], 0, keepProblems);
  const outcome: IntakeOutcome = {
    problems,
    shapeProblems: [],
    shapeProblemCount: 0,
    recordProblems: 0,
    rootSeen: false,
    cycles: [],
  };
  const batch: StagedRow[] = [];
  const flatLines = new FlatLineWriter();
  let seq = 0;
  const refuse = (issues: Problem[], state?: CycleState) => {
    outcome.recordProblems++;
    if (state) state.faulty = true;
    for (const problem of issues) problems.add(problem);
  };
  for await (const record of records) {
    const { kind, line } = record;
    if (kind === 'problem') {
      if (outcome.shapeProblemCount++ < keepProblems) {
        outcome.shapeProblems.push({ path: [], line, message: record.message });
      }
    } else if (kind === 'root') {
      outcome.rootSeen = true;
      const result = Root.safeParse(record.value);
      if (result.success) outcome.root = result.data;
      else refuse(problemsOfIssues(result.error.issues, [], line));
    } else if (kind === 'meritCycle') {
      const state = cycleState(outcome.cycles, record.index);
      state.line = line;
      if (record.employees) state.listsEmployees = true;
      const result = MeritCycleRecord.safeParse(record.value);
      const path: Path = ['meritCycles', record.index];
      if (result.success) state.cycle = result.data;
      else refuse(problemsOfIssues(result.error.issues, path, line), state);
    } else {
      const state = cycleState(outcome.cycles, record.cycle);
      state.listsEmployees = true;
      state.employees++;
      // Currency columns are amounts in the cycle's currency: its record comes first.
      const result = employeeSchema(state.cycle?.currency).safeParse(record.value);
      const path: Path = ['meritCycles', record.cycle, 'employees', record.index];
      if (!result.success) {
        refuse(problemsOfIssues(result.error.issues, path, line), state);
        continue;
      }
      const conflicts = noteColumns(state.columns, result.data.columns, record.index);
      if (conflicts.length > 0) {
        const employeeAt = (index: number): Path => [...path.slice(0, 3), index];
        refuse(
          conflicts.map(({ path: below, message, other }) => ({
            path: [...path, ...below],
            line,
            message,
            other: employeeAt(other),
          })),
          state,
        );
        continue;
      }
      // After a problem of the input's shape nothing else is reported: nothing is staged.
      // After a record's problem, rows are still staged for the repeats to be found, but
      // without the columns only a write would need.
      if (outcome.shapeProblemCount > 0) continue;
      const full = outcome.recordProblems === 0;
      batch.push(stagedRow(result.data, seq++, record, full && flatLines, state.cycle?.currency));
      if (batch.length >= BATCH_ROWS) await stage(toBatch(dialect, batch.splice(0)));
    }
  }
  if (batch.length > 0) await stage(toBatch(dialect, batch));
  return outcome;
}

function cycleState(cycles: CycleState[], index: number): CycleState {
  if (index >= MAX_MERIT_CYCLES && !cycles[index]) {
    throw fileProblem(
      `meritCycles[${index}]: a data set holds at most ${MAX_MERIT_CYCLES.toLocaleString('en')} merit cycles`,
    );
  }
  cycles[index] ??= { listsEmployees: false, employees: 0, faulty: false, columns: new Map() };
  return cycles[index];
}

/**
 * An employee as a staging row; null columns for a row staged only for the checks (no
 * `flatLines`). Given them and its cycle's currency, its flat CSV line too when it keeps
 * one (export/flat-line.ts).
 */
function stagedRow(
  employee: ImportEmployee,
  seq: number,
  record: Extract<ImportRecord, { kind: 'employee' }>,
  flatLines: FlatLineWriter | false,
  currency: string | undefined,
): StagedRow {
  const full = flatLines !== false;
  const bodyTail = full ? storedBodyTail(employee) : null;
  const line =
    flatLines && bodyTail !== null && currency
      ? flatLines.lineOf(employee, currency, Buffer.byteLength(bodyTail))
      : null;
  return {
    seq,
    cycle_index: record.cycle,
    employee_index: record.index,
    line: record.line ?? null,
    id: employee.id ?? null,
    new_id: employee.id ?? newId('mce'),
    email: employee.email,
    email_key: employee.email.toLowerCase(),
    first_name: full ? employee.firstName : null,
    last_name: full ? employee.lastName : null,
    preferred_name: full ? (employee.preferredName ?? null) : null,
    currency_code: full ? employee.currencyCode.code : null,
    currency_name: full ? employee.currencyCode.value : null,
    eligibility_status: full ? employee.eligibilityStatus : null,
    flat_key: line?.key ?? null,
    flat_tail: line?.tail ?? null,
    body_tail: bodyTail,
  };
}
