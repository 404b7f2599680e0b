// A merit cycle's templates (Settings → Data, docs/web-app.md): the header its spreadsheet
// import reads — the employee's own columns, then the cycle's columns from its column
// schema, as `compplan export employees` names them — and one example row, as CSV and as
// an Excel workbook. The CSV's example is written as the import reads it with the form's
// default choices (dates 2025-03-15, amounts 85000.00); the workbook's cells are typed as
// the workbook import reads them (xlsx.ts): a date cell, a number cell, a TRUE/FALSE cell,
// so that nothing about formats is guessed. The workbook's second sheet, "Columns", gives
// each column's name and what to write in it (the import reads the first sheet only).
import ExcelJS from 'exceljs';
import { readColumnSchema } from '../columns/repository.js';
import type { ColumnDescription } from '../columns/schema.js';
import type { Db } from '../db/connect.js';
import { columnsHeader, csvRow } from '../export/csv.js';
import { findMeritCycleRow } from '../tenancy/cycles.js';
import { readScope } from '../tenancy/scope.js';

/** One column of a template: its header, its name, what to write, and the example. */
interface TemplateColumn {
  header: string;
  name: string;
  what: string;
  /** The example cell, typed as a workbook holds it (null: empty). */
  example: string | number | boolean | Date | null;
  /** How a workbook shows a number or date cell (Excel's number format). */
  format?: string;
}

const EXAMPLE_DATE = new Date(Date.UTC(2025, 2, 15));

/** The example of a column (or a composite's part) of a type, and what to write in it. */
function exampleOf(type: string, currency: string): Omit<TemplateColumn, 'header' | 'name'> {
  switch (type) {
    case 'text':
      return { what: 'Text.', example: 'Example' };
    case 'number':
      return { what: 'A number.', example: 3 };
    case 'date':
      return { what: 'A date.', example: EXAMPLE_DATE, format: 'yyyy-mm-dd' };
    case 'boolean':
      return { what: 'TRUE or FALSE (or empty).', example: true };
    case 'currency':
      return {
        what: `An amount in ${currency}, the merit cycle's currency (no currency sign).`,
        example: 85000,
        format: '#,##0.00',
      };
    default:
      return {
        what: `A value of the type "${type}", as compplan export writes it.`,
        example: null,
      };
  }
}

/** The template's columns: the employee's own, then the cycle's in the schema's order. */
export function templateColumns(
  currency: string,
  schema: readonly ColumnDescription[],
): TemplateColumn[] {
  const own: TemplateColumn[] = [
    {
      header: 'email',
      name: 'Email',
      what: 'The employee’s email address (needed; one row per employee).',
      example: 'ada@example.com',
    },
    { header: 'firstName', name: 'First name', what: 'Needed.', example: 'Ada' },
    { header: 'lastName', name: 'Last name', what: 'Needed.', example: 'Lovelace' },
    {
      header: 'preferredName',
      name: 'Preferred name',
      what: 'Optional: leave it empty when there is none.',
      example: null,
    },
    {
      header: 'currencyCode',
      name: 'Currency',
      what: 'The three-letter code of the employee’s currency, such as USD, EUR or GBP (needed).',
      example: currency,
    },
    {
      header: 'eligibilityStatus',
      name: 'Eligibility',
      what: 'Eligible or Ineligible (needed).',
      example: 'Eligible',
    },
  ];
  const described = new Map<string, { name: string; type: string }>();
  for (const column of schema) {
    if (column.type === 'composite' && column.parts && column.parts.length > 0) {
      for (const part of column.parts) {
        described.set(`columns.${column.key}.${part.key}`, {
          name: `${column.name}: ${part.key}`,
          type: part.type,
        });
      }
    } else described.set(`columns.${column.key}`, { name: column.name, type: column.type });
  }
  const columns = columnsHeader(schema).map((header): TemplateColumn => {
    const { name, type } = described.get(header) ?? { name: header, type: 'text' };
    return { header, name, ...exampleOf(type, currency) };
  });
  return [...own, ...columns];
}

/** The organisation's cycle `cycleId` and its template's columns; undefined: no such cycle. */
export async function cycleTemplate(
  db: Db,
  organizationId: string,
  cycleId: string,
): Promise<{ name: string; columns: TemplateColumn[] } | undefined> {
  const cycle = await findMeritCycleRow(db, readScope(organizationId, null, []), cycleId);
  if (!cycle) return undefined;
  const schema = await readColumnSchema(db, cycle.id);
  return { name: cycle.name, columns: templateColumns(cycle.currency, schema) };
}

/** The header and one example row, as CSV (a date as 2025-03-15, an amount as 85000.00). */
export function templateCsv(columns: readonly TemplateColumn[]): string {
  const cell = ({ example, format }: TemplateColumn): string | null => {
    if (example instanceof Date) return example.toISOString().slice(0, 10);
    if (typeof example === 'boolean') return example ? 'TRUE' : 'FALSE';
    if (typeof example === 'number')
      return format === '#,##0.00' ? example.toFixed(2) : String(example);
    return example;
  };
  return csvRow(columns.map((column) => column.header)) + csvRow(columns.map(cell));
}

/**
 * The header and one example row as an Excel workbook: the sheet "Employees" (the one the
 * import reads) with typed cells, and the sheet "Columns" naming each column.
 */
export async function templateXlsx(
  cycleName: string,
  columns: readonly TemplateColumn[],
): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  book.creator = 'compplan';
  book.title = `${cycleName}: employees`;
  const employees = book.addWorksheet('Employees', {
    views: [{ state: 'frozen', ySplit: 1 }],
  });
  employees.columns = columns.map((column) => ({
    header: column.header,
    key: column.header,
    width: Math.min(40, Math.max(14, column.header.length + 2)),
  }));
  employees.getRow(1).font = { bold: true };
  const example = employees.addRow(columns.map((column) => column.example));
  columns.forEach((column, index) => {
    if (column.format !== undefined) example.getCell(index + 1).numFmt = column.format;
  });

  const about = book.addWorksheet('Columns');
  about.columns = [
    { header: 'Column (first row of "Employees")', width: 34 },
    { header: 'Name', width: 24 },
    { header: 'What to write', width: 70 },
  ];
  about.getRow(1).font = { bold: true };
  for (const column of columns) about.addRow([column.header, column.name, column.what]);
  return Buffer.from(await book.xlsx.writeBuffer());
}
