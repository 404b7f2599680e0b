// A merit cycle's employees from CSV (`compplan import FILE.csv --org SLUG --cycle ID`, and
// a CSV file uploaded under Settings → Data), loaded as the JSON import loads a data set
// (same validation, one transaction), or checked (the same, rolled back).
import { readColumnSchema } from '../columns/repository.js';
import type { DatabaseHandle } from '../db/connect.js';
import { toIso } from '../db/values.js';
import { ManagementError } from '../errors.js';
import { findMeritCycleRow } from '../tenancy/cycles.js';
import { findOrganizationBySlug } from '../tenancy/organizations.js';
import { readScope } from '../tenancy/scope.js';
import { csvProblems, employeesFromCsv } from './csv.js';
import { ImportError } from './errors.js';
import {
  type CheckedImport,
  checkDataSet,
  type ImportSummary,
  importDataSet,
  type LoadOptions,
} from './load.js';
import type { DataSetInput } from './schema.js';

/** The organisation or the cycle a CSV file is for does not exist. */
export class CsvTargetError extends ManagementError {
  override name = 'CsvTargetError';
}

type CsvOptions = LoadOptions & { org: string; cycle: string; prune: boolean };

export async function importEmployeesCsv(
  database: DatabaseHandle,
  text: string,
  options: CsvOptions,
): Promise<ImportSummary> {
  return loadCsv(database, text, options, importDataSet);
}

/** Checks a CSV file as importEmployeesCsv would import it: nothing is written. */
export async function checkEmployeesCsv(
  database: DatabaseHandle,
  text: string,
  options: CsvOptions,
): Promise<CheckedImport> {
  return loadCsv(database, text, options, checkDataSet);
}

async function loadCsv<T>(
  database: DatabaseHandle,
  text: string,
  { org, cycle: cycleId, ...options }: CsvOptions,
  load: (database: DatabaseHandle, dataSet: unknown, options: LoadOptions) => Promise<T>,
): Promise<T> {
  const organization = await findOrganizationBySlug(database.db, org);
  if (!organization) throw new CsvTargetError(`no organisation "${org}"`);
  const cycle = await findMeritCycleRow(database.db, readScope(organization.id, null, []), cycleId);
  if (!cycle) throw new CsvTargetError(`no merit cycle ${cycleId} in organisation "${org}"`);
  // Cells are read by the cycle's column schema: the type and name of each known column.
  const columns = await readColumnSchema(database.db, cycle.id);
  const { employees, source } = employeesFromCsv(text, { columns, currency: cycle.currency });
  // The organisation and the cycle as stored: only the employees come from the file.
  const dataSet: DataSetInput = {
    organization: { slug: organization.slug, name: organization.name },
    meritCycles: [
      {
        id: cycle.id,
        name: cycle.name,
        status: cycle.status as DataSetInput['meritCycles'][number]['status'],
        startDate: toIso(cycle.start_date),
        endDate: toIso(cycle.end_date),
        createdDate: toIso(cycle.created_date),
        currency: cycle.currency,
        employees,
      },
    ],
  };
  try {
    // Validated record by record by the loader, as a file's data set is.
    return await load(database, dataSet, options);
  } catch (error) {
    if (error instanceof ImportError) throw csvProblems(error, source);
    throw error;
  }
}
