// Step 1 of an import (load.ts): each record validated as it arrives (the record schemas
// of schema.ts), each valid employee turned into a staging row, rows handed on in batches
// (staging.ts) to be written to the staging table. The organisation and the merit cycles
// (a few hundred at most) are kept; employees never are. No database here: for a file
// this runs in a worker thread (intake-worker.ts) while the import's own thread writes
// the batches, and for a data set in memory in the import's thread.
import type { Dialect } from '../db/connect.js';
import { newId } from '../ids.js';
import { toEmployee } from '../modules/employees/repository.js';
import { ImportError, problemsOfIssues } from './errors.js';
import {
  type ImportRecord,
  type ImportRecords,
  ProblemList,
  type ProblemListState,
  type SortKey,
} from './records.js';
import {
  Employee,
  END_BEFORE_START,
  type ImportEmployee,
  type ImportMeritCycleRecord,
  type ImportRoot,
  MeritCycleRecord,
  Root,
} from './schema.js';
import { BATCH_ROWS, BatchBuilder, type StagedBatch, type StagedRow } from './staging.js';

// The merit cycles of a data set are held in memory until the merge (a few hundred bytes
// each); so that no file can grow that without bound, a data set (one organisation) has at
// most this many. A real organisation runs a few cycles a year.
export const MAX_MERIT_CYCLES = 10_000;

export interface CycleState {
  /** The validated cycle, once its record has come and passed. */
  cycle?: ImportMeritCycleRecord;
  seen: boolean;
  line?: number;
  /** The file gives the cycle a list of employees (matched, and pruned with --prune). */
  listsEmployees: boolean;
  /** Employee records of the cycle so far. */
  employees: number;
  /** A record of the cycle (its own or an employee's) has a problem. */
  faulty: boolean;
}

/** What the intake found: plain data, so that it can cross from a worker thread. */
export interface IntakeOutcome {
  problems: ProblemListState;
  /** Problems of the input's shape (NDJSON lines that are no record): reported alone. */
  shapeProblems: string[];
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
 * employee, `stage` awaited for each full batch (and the last).
 */
export async function takeRecords(
  records: ImportRecords,
  dialect: Dialect,
  stage: Stage,
): Promise<IntakeOutcome> {
  const intake = new Intake(dialect, stage);
  for await (const record of records) await intake.take(record);
  await intake.send();
  return intake.outcome();
}

/** Validates records as they come, keeps the cycles, stages the employees. */
class Intake {
  private readonly problems = new ProblemList();
  private readonly shapeProblems: string[] = [];
  private recordProblems = 0;
  private root?: ImportRoot;
  private rootSeen = false;
  private readonly cycles: CycleState[] = [];
  private seq = 0;
  private readonly batch: BatchBuilder;

  constructor(
    dialect: Dialect,
    private readonly stage: Stage,
  ) {
    this.batch = new BatchBuilder(dialect);
  }

  outcome(): IntakeOutcome {
    return {
      problems: this.problems.state(),
      shapeProblems: this.shapeProblems,
      recordProblems: this.recordProblems,
      root: this.root,
      rootSeen: this.rootSeen,
      cycles: this.cycles,
    };
  }

  private cycleState(index: number): CycleState {
    let state = this.cycles[index];
    if (!state) {
      if (index >= MAX_MERIT_CYCLES) {
        throw new ImportError([
          `meritCycles[${index}]: a data set holds at most ${MAX_MERIT_CYCLES.toLocaleString('en')} merit cycles`,
        ]);
      }
      state = { seen: false, listsEmployees: false, employees: 0, faulty: false };
      this.cycles[index] = state;
    }
    return state;
  }

  private report(key: SortKey, line: number | undefined, problem: string): void {
    this.problems.add(key, line === undefined ? problem : `line ${line}: ${problem}`);
  }

  async take(record: ImportRecord): Promise<void> {
    switch (record.kind) {
      case 'problem':
        this.shapeProblems.push(record.message);
        return;
      case 'root':
        return this.takeRoot(record.value, record.line);
      case 'meritCycle':
        return this.takeCycle(record);
      case 'employee':
        return this.takeEmployee(record);
    }
  }

  private takeRoot(value: unknown, line: number | undefined): void {
    this.rootSeen = true;
    const result = Root.safeParse(value);
    if (result.success) {
      this.root = result.data;
      return;
    }
    this.recordProblems++;
    // Where whole-data-set validation lists them: the organisation first, the cycles
    // next, unknown keys of the top after the cycles.
    problemsOfIssues(result.error.issues).forEach(({ problem, unrecognized }, k) => {
      const top = problem.startsWith('meritCycles') ? [2, -1, k] : [1, k];
      this.report(unrecognized ? [3, k] : top, line, problem);
    });
  }

  private takeCycle(record: Extract<ImportRecord, { kind: 'meritCycle' }>): void {
    const state = this.cycleState(record.index);
    state.seen = true;
    state.line = record.line;
    if (record.employees) state.listsEmployees = true;
    const result = MeritCycleRecord.safeParse(record.value);
    if (result.success) {
      state.cycle = result.data;
      return;
    }
    state.faulty = true;
    this.recordProblems++;
    const prefix = ['meritCycles', record.index];
    const issues = result.error.issues;
    let k = 0;
    for (const issue of issues) {
      // The cycle's fields, then (at the place of `employees`) its employees, then its
      // unknown keys, then the check of its dates: the order of the whole data set.
      const part =
        issue.code === 'unrecognized_keys'
          ? 2
          : issue.code === 'custom' && issue.message === END_BEFORE_START
            ? 3
            : issue.path[0] === 'employees'
              ? 1
              : 0;
      for (const { problem } of problemsOfIssues([issue], prefix)) {
        const key = part === 1 ? [2, record.index, 1, -1, k] : [2, record.index, part, k];
        this.report(key, record.line, problem);
        k++;
      }
    }
  }

  private async takeEmployee(record: Extract<ImportRecord, { kind: 'employee' }>): Promise<void> {
    const state = this.cycleState(record.cycle);
    state.listsEmployees = true;
    state.employees++;
    const result = Employee.safeParse(record.value);
    if (!result.success) {
      state.faulty = true;
      this.recordProblems++;
      const prefix = ['meritCycles', record.cycle, 'employees', record.index];
      problemsOfIssues(result.error.issues, prefix).forEach(({ problem }, k) => {
        this.report([2, record.cycle, 1, record.index, k], record.line, problem);
      });
      return;
    }
    // Staged even after a problem, so that repeats are still found and reported; but
    // then without the columns only a write would need.
    this.batch.add(
      stagedRow(
        result.data,
        this.seq++,
        record,
        this.recordProblems === 0 && this.shapeProblems.length === 0,
      ),
    );
    if (this.batch.rows >= BATCH_ROWS) await this.send();
  }

  /** Hands on the rows staged so far, as one batch. */
  async send(): Promise<void> {
    if (this.batch.rows > 0) await this.stage(this.batch.take());
  }
}

/** An employee as a staging row; its `body` is built with the id it has in the file. */
function stagedRow(
  employee: ImportEmployee,
  seq: number,
  record: Extract<ImportRecord, { kind: 'employee' }>,
  full: boolean,
): StagedRow {
  const id = employee.id ?? newId('mce');
  const row: StagedRow = {
    seq,
    cycle_index: record.cycle,
    employee_index: record.index,
    line: record.line ?? null,
    id: employee.id ?? null,
    new_id: id,
    email: employee.email,
    email_key: employee.email.toLowerCase(),
    first_name: null,
    last_name: null,
    preferred_name: null,
    currency_code: null,
    currency_name: null,
    eligibility_status: null,
    body: null,
  };
  if (!full) return row;
  row.first_name = employee.firstName;
  row.last_name = employee.lastName;
  row.preferred_name = employee.preferredName ?? null;
  row.currency_code = employee.currencyCode.code;
  row.currency_name = employee.currencyCode.value;
  row.eligibility_status = employee.eligibilityStatus;
  row.body = JSON.stringify(
    toEmployee({
      id,
      email: employee.email,
      firstName: employee.firstName,
      lastName: employee.lastName,
      preferredName: row.preferred_name,
      currencyCode: employee.currencyCode,
      eligibilityStatus: employee.eligibilityStatus,
      columns: employee.columns,
    }),
  );
  return row;
}
