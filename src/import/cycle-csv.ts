// A merit cycle's employees from CSV or an Excel workbook (`compplan import FILE.csv --org
// SLUG --cycle ID`, FILE.xlsx the same, and such a file uploaded under Settings → Data), loaded as the JSON import loads a data set
// (same validation, one transaction), or checked (the same, rolled back).
import { readColumnSchema } from '../columns/repository.js';
import type { DatabaseHandle } from '../db/connect.js';
import { toIso } from '../db/values.js';
import { ManagementError } from '../errors.js';
import { findMeritCycleRow } from '../tenancy/cycles.js';
import { findOrganizationBySlug } from '../tenancy/organizations.js';
import { readScope } from '../tenancy/scope.js';
import { csvProblems, csvText, employeesFromCsv } from './csv.js';
import { ImportError } from './errors.js';
import {
  type CheckedImport,
  checkDataSet,
  type ImportSummary,
  importDataSet,
  type LoadOptions,
} from './load.js';
import type { DataSetInput } from './schema.js';
import { ReadAs, type ReadingChoices, readingChoices } from './sheet-reading.js';
import type { WorkbookInput } from './workbook-kind.js';

/** A CSV file's bytes (or text already decoded), or an Excel workbook and its sheet. */
export type SheetInput = Uint8Array | string | WorkbookInput;

const isWorkbook = (input: SheetInput): input is WorkbookInput =>
  typeof input === 'object' && !(input instanceof Uint8Array);

/** The organisation or the cycle a CSV file is for does not exist. */
export class CsvTargetError extends ManagementError {
  override name = 'CsvTargetError';
}

type CsvOptions = LoadOptions & {
  org: string;
  cycle: string;
  prune: boolean;
  /** How the file writes what would otherwise be guessed (sheet-reading.ts). */
  reading?: Partial<ReadingChoices> | undefined;
};

/** A check of a CSV file: what would change, and how the file was read. */
export type CheckedCsv = CheckedImport & { readAs: string[] };

/** Loads a CSV file (its bytes, or text already decoded) into the cycle's employees. */
export async function importEmployeesCsv(
  database: DatabaseHandle,
  bytes: SheetInput,
  options: CsvOptions,
): Promise<ImportSummary> {
  return (await loadCsv(database, bytes, options, importDataSet)).loaded;
}

/** Checks a CSV file as importEmployeesCsv would import it: nothing is written. */
export async function checkEmployeesCsv(
  database: DatabaseHandle,
  bytes: SheetInput,
  options: CsvOptions,
): Promise<CheckedCsv> {
  const { loaded, readAs } = await loadCsv(database, bytes, options, checkDataSet);
  return { ...loaded, readAs: readAs.words() };
}

async function loadCsv<T>(
  database: DatabaseHandle,
  bytes: SheetInput,
  { org, cycle: cycleId, reading, ...options }: CsvOptions,
  load: (database: DatabaseHandle, dataSet: unknown, options: LoadOptions) => Promise<T>,
): Promise<{ loaded: T; readAs: ReadAs }> {
  const organization = await findOrganizationBySlug(database.db, org);
  if (!organization) throw new CsvTargetError(`no organisation "${org}"`);
  const cycle = await findMeritCycleRow(database.db, readScope(organization.id, null, []), cycleId);
  if (!cycle) throw new CsvTargetError(`no merit cycle ${cycleId} in organisation "${org}"`);
  // Cells are read by the cycle's column schema: the type and name of each known column.
  const columns = await readColumnSchema(database.db, cycle.id);
  const sheetCycle = { columns, currency: cycle.currency };
  let readAs: ReadAs;
  let read: ReturnType<typeof employeesFromCsv>;
  if (isWorkbook(bytes)) {
    // Typed cells: of the reading choices only whether unknown columns are ignored applies.
    const { ignoreUnknownColumns } = readingChoices(reading);
    readAs = new ReadAs(readingChoices({ ignoreUnknownColumns, typedCells: true }));
    // exceljs is loaded only for a workbook (a command's start stays quick).
    const { employeesFromXlsx } = await import('./xlsx.js');
    read = await employeesFromXlsx(bytes, sheetCycle, readAs);
  } else {
    readAs = new ReadAs(readingChoices(reading));
    const { text, problems } = csvText(bytes, readAs);
    read = employeesFromCsv(text, sheetCycle, readAs, problems);
  }
  const { employees, source } = read;
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
    return { loaded: await load(database, dataSet, options), readAs };
  } catch (error) {
    if (error instanceof ImportError) throw csvProblems(error, source);
    throw error;
  }
}
