// `compplan import FILE.csv --org SLUG --cycle ID`: a merit cycle's employees from CSV,
// loaded as the JSON import loads a data set (same validation, one transaction).

import { readColumnSchema } from '../../columns/repository.js';
import type { DatabaseHandle } from '../../db/connect.js';
import { toIso } from '../../db/values.js';
import { csvProblems, employeesFromCsv } from '../../import/csv.js';
import { ImportError } from '../../import/errors.js';
import { type ImportSummary, importDataSet } from '../../import/load.js';
import type { DataSetInput } from '../../import/schema.js';
import { readScope } from '../../modules/api-keys/scope.js';
import { findMeritCycleRow } from '../../modules/merit-cycles/repository.js';
import { findOrganizationBySlug } from '../../modules/organizations/repository.js';
import { CliError } from '../errors.js';

export async function importEmployeesCsv(
  database: DatabaseHandle,
  text: string,
  options: { org: string; cycle: string; prune: boolean; changeRetentionDays: number },
): Promise<ImportSummary> {
  const organization = await findOrganizationBySlug(database.db, options.org);
  if (!organization) throw new CliError(`no organisation "${options.org}"`);
  const cycle = await findMeritCycleRow(
    database.db,
    readScope(organization.id, null, []),
    options.cycle,
  );
  if (!cycle)
    throw new CliError(`no merit cycle ${options.cycle} in organisation "${options.org}"`);
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
    return await importDataSet(database, dataSet, {
      prune: options.prune,
      changeRetentionDays: options.changeRetentionDays,
    });
  } catch (error) {
    if (error instanceof ImportError) throw csvProblems(error, source);
    throw error;
  }
}
