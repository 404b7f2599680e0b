// The one loader of every import (a JSON or NDJSON file, CSV, the demo, a data set in
// memory): records in, one transaction, all of it or, on any problem, nothing. Loading the
// same data set twice changes nothing the second time (docs/import-format.md). In order:
// 1. Each record is validated as it arrives, and each valid employee is written, in
//    batches, to a staging table that lives only inside the import's transaction
//    (intake.ts, staging.ts; for a file, in a worker thread: intake-worker.ts).
// 2. At the end of the file, the checks across records (repeats.ts).
// 3. Only when there is no problem at all is anything written (merge.ts).
import { inOrganizationTransaction } from '../changes/transaction.js';
import type { DatabaseHandle } from '../db/connect.js';
import { fileProblem, ImportError, ProblemList } from './errors.js';
import { type IntakeOutcome, type Stage, takeRecords } from './intake.js';
import type { IntakeWorker } from './intake-worker.js';
import { type ImportOptions, type ImportSummary, merge } from './merge.js';
import { type ImportRecords, recordsOfDataSet } from './records.js';
import { checkRepeats } from './repeats.js';
import type { Source } from './source.js';
import { createStaging, dropStaging, indexStaging, StagingWriter } from './staging.js';

export type { ImportOptions, ImportSummary } from './merge.js';

/** A data set held in memory (the demo, CSV, tests), loaded record by record as a file is. */
export function importDataSet(
  database: DatabaseHandle,
  dataSet: unknown,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  return importRecords(database, recordsOfDataSet(dataSet), options);
}

/** Loads a data set given as records (records.ts), in this thread. */
export function importRecords(
  database: DatabaseHandle,
  records: ImportRecords,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  return load(database, (stage) => takeRecords(records, database.dialect, stage), options);
}

/**
 * Loads a JSON or NDJSON file: read, parsed and validated by `worker` (started for the
 * file, and for this database's dialect) while this thread writes. Fails with `signal`'s
 * reason once it is aborted.
 */
export function importFile(
  database: DatabaseHandle,
  worker: IntakeWorker,
  source: Source,
  options: ImportOptions & { signal?: AbortSignal } = {},
): Promise<ImportSummary> {
  return load(database, (stage) => worker.take(source, stage, options.signal), options);
}

function load(
  database: DatabaseHandle,
  intake: (stage: Stage) => Promise<IntakeOutcome>,
  options: ImportOptions,
): Promise<ImportSummary> {
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
    const problems = new ProblemList(taken.problems.kept, taken.problems.total);
    await checkRepeats(trx, taken, problems);
    // (No root without a problem: an invalid one is one.)
    if (problems.total > 0 || !taken.root) throw problems.error();
    await lock(taken.root.organization.slug);
    const merged = await merge(trx, dialect, taken.root, taken.cycles, options, now);
    await dropStaging(trx, dialect);
    return merged;
  });
}
