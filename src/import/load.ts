// The one loader of every import (a JSON or NDJSON file, CSV, the demo, a data set in
// memory): records in, one transaction, all of it or, on any problem, nothing. Loading the
// same data set twice changes nothing the second time (docs/import-format.md). In order:
// 1. Each record is validated as it arrives, and each valid employee is written, in
//    batches, to a staging table that lives only inside the import's transaction
//    (intake.ts, staging.ts; for a file, in a worker thread: intake-worker.ts).
// 2. At the end of the file, the checks across records (repeats.ts).
// 3. Only when there is no problem at all is anything written (merge.ts), with each
//    cycle's count and last import (cycle-imports.ts).
// A check (`check: true`, the web application's first step) runs all of it and rolls back:
// what would change, or the problems, and nothing written.
import type { Kysely } from 'kysely';
import { inOrganizationTransaction } from '../changes/transaction.js';
import type { DatabaseHandle } from '../db/connect.js';
import type { Database } from '../db/types.js';
import { CLI_IMPORTER, type CycleImport, recordCycleImports } from './cycle-imports.js';
import { fileProblem, ImportError, ProblemList } from './errors.js';
import { type IntakeOutcome, type Stage, takeRecords } from './intake.js';
import type { IntakeWorker } from './intake-worker.js';
import { type ImportOptions, type ImportSummary, merge } from './merge.js';
import { type ImportRecords, recordsOfDataSet } from './records.js';
import { checkRepeats } from './repeats.js';
import { settleImportedRows } from './settle.js';
import type { Source } from './source.js';
import { createStaging, dropStaging, indexStaging, StagingWriter } from './staging.js';

export type { ImportOptions, ImportSummary } from './merge.js';

export interface LoadOptions extends ImportOptions {
  /** The only organisation the data set may be of (a web application user's). */
  organization?: string;
  /**
   * The organisation's change counter the import was checked at (null: the organisation
   * did not exist); refused with StaleCheckError when it has moved since.
   */
  checkedAt?: number | null;
  /**
   * How many problems a refusal keeps (ImportError.kept; MAX_PROBLEMS when absent): the
   * web application's check keeps its whole list, to download (MAX_LISTED_PROBLEMS).
   */
  keepProblems?: number;
}

/** What a check found would change: the summary, each cycle, and where it was checked. */
export interface CheckedImport {
  summary: ImportSummary;
  cycles: (CycleImport & { name: string })[];
  /** The organisation's change counter (null: the import would create it). */
  counter: number | null;
}

/** The data changed between the check and the import: nothing was imported. */
export class StaleCheckError extends Error {
  override name = 'StaleCheckError';
}

/** Thrown to roll a check back with what it found. */
class CheckRollback extends Error {
  constructor(readonly checked: CheckedImport) {
    super('check rolled back');
  }
}

/** A data set held in memory (the demo, CSV, tests), loaded record by record as a file is. */
export function importDataSet(
  database: DatabaseHandle,
  dataSet: unknown,
  options: LoadOptions = {},
): Promise<ImportSummary> {
  return importRecords(database, recordsOfDataSet(dataSet), options);
}

/** Checks a data set held in memory as importDataSet would import it: nothing is written. */
export function checkDataSet(
  database: DatabaseHandle,
  dataSet: unknown,
  options: LoadOptions = {},
): Promise<CheckedImport> {
  return checkRecords(database, recordsOfDataSet(dataSet), options);
}

/** Loads a data set given as records (records.ts), in this thread. */
export async function importRecords(
  database: DatabaseHandle,
  records: ImportRecords,
  options: LoadOptions = {},
): Promise<ImportSummary> {
  const intake = (stage: Stage) =>
    takeRecords(records, database.dialect, stage, options.keepProblems);
  return imported(database, await load(database, intake, options));
}

/** Checks a data set given as records: everything an import does, then rolled back. */
export function checkRecords(
  database: DatabaseHandle,
  records: ImportRecords,
  options: LoadOptions = {},
): Promise<CheckedImport> {
  const intake = (stage: Stage) =>
    takeRecords(records, database.dialect, stage, options.keepProblems);
  return check(load(database, intake, { ...options, check: true }));
}

/**
 * Loads a JSON or NDJSON file: read, parsed and validated by `worker` (started for the
 * file, and for this database's dialect) while this thread writes. Fails with `signal`'s
 * reason once it is aborted.
 */
export async function importFile(
  database: DatabaseHandle,
  worker: IntakeWorker,
  source: Source,
  options: LoadOptions & { signal?: AbortSignal } = {},
): Promise<ImportSummary> {
  const intake = (stage: Stage) => worker.take(source, stage, options.signal);
  return imported(database, await load(database, intake, options));
}

/** A committed import's summary, once the rows it wrote are settled (settle.ts). */
async function imported(database: DatabaseHandle, loaded: CheckedImport): Promise<ImportSummary> {
  await settleImportedRows(database, loaded.summary);
  return loaded.summary;
}

/** Checks a JSON or NDJSON file as importFile would import it: nothing is written. */
export function checkFile(
  database: DatabaseHandle,
  worker: IntakeWorker,
  source: Source,
  options: LoadOptions & { signal?: AbortSignal } = {},
): Promise<CheckedImport> {
  const intake = (stage: Stage) => worker.take(source, stage, options.signal);
  return check(load(database, intake, { ...options, check: true }));
}

async function check(loading: Promise<CheckedImport>): Promise<CheckedImport> {
  try {
    await loading;
  } catch (error) {
    if (error instanceof CheckRollback) return error.checked;
    throw error;
  }
  throw new Error('a check was not rolled back');
}

function load(
  database: DatabaseHandle,
  intake: (stage: Stage) => Promise<IntakeOutcome>,
  options: LoadOptions & { check?: boolean },
): Promise<CheckedImport> {
  const now = (options.now ?? new Date()).toISOString();
  const { dialect } = database;
  return inOrganizationTransaction(database, async (trx, lock) => {
    await createStaging(trx, dialect);
    const writer = new StagingWriter(trx);
    const taken = await intake((batch) => writer.write(batch));
    await writer.finish();
    if (taken.shapeProblemCount > 0) {
      throw new ImportError(taken.shapeProblems, taken.shapeProblemCount);
    }
    if (!taken.rootSeen) throw fileProblem('(the file): holds no data set');
    await indexStaging(trx, dialect);
    const problems = new ProblemList(
      taken.problems.kept,
      taken.problems.total,
      options.keepProblems,
    );
    await checkRepeats(trx, taken, problems);
    // (No root without a problem: an invalid one is one.)
    if (problems.total > 0 || !taken.root) throw problems.error();
    const { slug } = taken.root.organization;
    if (options.organization !== undefined && slug !== options.organization) {
      throw fileProblem(
        `organization.slug: the data set is of the organisation "${slug}"; only data of "${options.organization}" can be loaded here`,
      );
    }
    await lock(slug);
    const counter = await changeCounterOf(trx, slug);
    if (options.checkedAt !== undefined && counter !== options.checkedAt) {
      throw new StaleCheckError(
        'The data changed after the check (another import, or a merit cycle removed): check the file again.',
      );
    }
    const { summary, cycles } = await merge(trx, dialect, taken.root, taken.cycles, options, now);
    const imports = cycles.map((cycle, index): CycleImport & { name: string } => {
      const state = taken.cycles[index];
      const { created = 0, updated = 0, removed = 0 } = cycle.employees ?? {};
      const unchanged = (state?.employees ?? 0) - created - updated;
      return {
        meritCycleId: cycle.meritCycleId,
        cycle: cycle.cycle,
        name: state?.cycle?.name ?? '',
        ...(cycle.employees && { employees: { created, updated, unchanged, removed } }),
      };
    });
    // Each cycle's last import, by the import's actor (merge recorded it in the audit log).
    const importedBy = options.actor?.kind === 'user' ? options.actor.email : CLI_IMPORTER;
    await recordCycleImports(trx, imports, importedBy, now);
    await dropStaging(trx, dialect);
    const checked: CheckedImport = { summary, cycles: imports, counter };
    if (options.check) throw new CheckRollback(checked);
    return checked;
  });
}

async function changeCounterOf(trx: Kysely<Database>, slug: string): Promise<number | null> {
  const row = await trx
    .selectFrom('organizations')
    .select('change_seq')
    .where('slug', '=', slug)
    .executeTakeFirst();
  return row ? Number(row.change_seq) : null;
}
