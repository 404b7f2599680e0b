// A merit cycle's employees from CSV (`compplan import FILE.csv --org SLUG --cycle ID`).
// The rows become the same data set a JSON import loads — the organisation and the cycle
// as stored, the cycle's employees from the file — and go through the same loader
// (importDataSet: validated record by record, one transaction). Problems name the CSV row
// (its line in the file) and column, from the loader's problems (`csvProblems`). The
// columns are those `compplan export employees` writes, so an export can be edited and
// loaded back; docs/import-format.md lists them.
import { CsvError, parse } from 'csv-parse/sync';
import type { ColumnDescription } from '../columns/schema.js';
import { COLUMN_NAME, EMPLOYEE_COLUMNS, OTHER_COLUMNS, unflattenColumns } from '../export/csv.js';
import {
  fileProblem,
  ImportError,
  inMiB,
  messageOf,
  type Path,
  type Problem,
  ProblemList,
} from './errors.js';
import { isObject } from './records.js';
import type { DataSetInput } from './schema.js';

type EmployeeInput = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];

// The header: the columns `compplan export employees` writes (`currencyCode` also names
// the code), `columns.KEY`, `columns.KEY.PART` and OTHER_COLUMNS.
const REQUIRED = ['email', 'firstName', 'lastName', 'eligibilityStatus'];
const isColumn = (name: string) =>
  EMPLOYEE_COLUMNS.includes(name) || name === 'currencyCode' || COLUMN_NAME.test(name);

// The limits of a CSV file (docs/import-format.md, "Limits"). It is read whole, then its
// rows, then the employees made of them are held: a file of 4 MiB peaks near 300 MB
// (28,000 employees of 150 bytes a row; an export's row of ~250 bytes makes it some
// 17,000). Rows of a few bytes (`,,,,,`) would make 700,000 employees of 4 MiB, hence a
// limit on rows too, which rows of employees never reach first.
export const CSV_MAX_BYTES = 4 * 1024 * 1024;
export const CSV_MAX_ROWS = 50_000;
const FOR_NDJSON = 'the limit for a CSV import (one merit cycle); give a larger data set as NDJSON';

export const csvTooLarge = () =>
  fileProblem(`the file is larger than ${inMiB(CSV_MAX_BYTES)}, ${FOR_NDJSON}`);

// csv-parse's errors of the text, in the words of this format.
const SYNTAX: Record<string, string> = {
  INVALID_OPENING_QUOTE:
    'a quote inside an unquoted field; quote the whole field and double the quote ("")',
  CSV_INVALID_CLOSING_QUOTE: 'text after the closing quote of a field',
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is never closed',
};

interface CsvRecord {
  /** The line of the file the record starts on (the header is line 1). */
  line: number;
  /** null for an empty field; a quoted empty field ("") is the empty string. */
  fields: (string | null)[];
}

/**
 * RFC 4180 by csv-parse: CRLF, LF or CR line ends, a byte order mark skipped, blank lines
 * too. An empty field is null and a quoted empty one ("") the empty string, as the export
 * writes a null and an empty text.
 */
export function parseCsvRecords(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  // A record starts after the lines of the records before it (each has its line breaks
  // inside quoted fields and the one that ends it) and the blank lines csv-parse skipped
  // (`empty_lines`, in a record's info and on an error): `next + empty_lines`. csv-parse's
  // own count (`lines`) is not used: it takes a CRLF inside a quoted field for two lines.
  let next = 1;
  try {
    parse(text, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      record_delimiter: ['\r\n', '\n', '\r'],
      cast: (value, { quoting }) => (value === '' && !quoting ? null : value),
      on_record: (record: (string | null)[], { empty_lines }) => {
        const line = next + empty_lines;
        next += newlines(record.join(',')) + 1;
        // The header and CSV_MAX_ROWS rows; the first row more stops the parse.
        if (records.length > CSV_MAX_ROWS) {
          throw fileProblem(
            `line ${line}: more than ${CSV_MAX_ROWS.toLocaleString('en')} rows, ${FOR_NDJSON}`,
          );
        }
        records.push({ line, fields: record });
        return null;
      },
    });
  } catch (error) {
    if (!(error instanceof CsvError) || !(error.code in SYNTAX)) throw error;
    // Named, as every problem of a row is, by the line the record starts on.
    throw fileProblem(`line ${next + Number(error.empty_lines)}: ${SYNTAX[error.code]}`);
  }
  return records;
}

const newlines = (text: string) => text.split(/\r\n|\n|\r/).length - 1;

/** Where each employee of the data set came from, to name it in problems. */
interface CsvSource {
  lines: number[];
  header: string[];
}

/** The header's problems: unknown, repeated or missing columns. */
function headerProblems(header: readonly string[]): Problem[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) problems.push(`column "${name}" appears twice`);
    seen.add(name);
    if (!isColumn(name)) {
      problems.push(`"${name}" is not a column of this format (see docs/import-format.md, "CSV")`);
    }
  }
  if (seen.has('currencyCode') && seen.has('currencyCode.code')) {
    problems.push('give the currency as "currencyCode" or "currencyCode.code", not both');
  }
  for (const name of REQUIRED) {
    if (!seen.has(name)) problems.push(`the column "${name}" is missing`);
  }
  if (!seen.has('currencyCode') && !seen.has('currencyCode.code')) {
    problems.push('the column "currencyCode" (or "currencyCode.code") is missing');
  }
  return problems.map((message) => ({ path: [], message: `header: ${message}` }));
}

/** What the CSV import reads cells by: the merit cycle's column schema and currency. */
export interface CsvCycle {
  columns: readonly ColumnDescription[];
  currency: string;
}

/**
 * The employees of a CSV file, as data set input, their cells read by the cycle's column
 * schema (columns/cells.ts); problems name line and column.
 */
export function employeesFromCsv(
  text: string,
  cycle: CsvCycle,
): { employees: EmployeeInput[]; source: CsvSource } {
  // Counted in characters here (the file was read as at most CSV_MAX_BYTES bytes).
  if (text.length > CSV_MAX_BYTES) throw csvTooLarge();
  const [headerRecord, ...rows] = parseCsvRecords(text);
  // Nothing but white space (and a byte order mark, which trim() takes too) is empty.
  if (!headerRecord || text.trim() === '') {
    throw fileProblem('the file is empty: it needs a header row and one row per employee');
  }
  const header = headerRecord.fields.map((name) => (name ?? '').trim());
  const wrongHeader = headerProblems(header);
  if (wrongHeader.length > 0) throw new ImportError(wrongHeader);

  const employees: EmployeeInput[] = [];
  const lines: number[] = [];
  const problems = new ProblemList();
  const report = (line: number, message: string, column?: string) =>
    problems.add({
      path: [],
      message: `row at line ${line}${column === undefined ? '' : `, column "${column}"`}: ${message}`,
    });
  for (const { line, fields } of rows) {
    if (fields.length !== header.length) {
      report(line, `has ${fields.length} fields, the header has ${header.length}`);
      continue;
    }
    const employee: Record<string, unknown> = {};
    const currency: { code?: string; value?: string } = {};
    const flat: Record<string, unknown> = {};
    header.forEach((name, index) => {
      const cell = fields[index] ?? null;
      const value = cell ?? '';
      if (name === OTHER_COLUMNS) {
        if (value === '') return;
        const others = parseObject(value);
        if (others === undefined) report(line, 'must be a JSON object', name);
        else {
          for (const [key, other] of Object.entries(others)) {
            if (COLUMN_NAME.test(key)) flat[key] = other;
            else report(line, `"${key}" is not a column name`, name);
          }
        }
      } else if (name.startsWith('columns.')) flat[name] = cell;
      else if (name === 'currencyCode' || name === 'currencyCode.code') currency.code = value;
      else if (name === 'currencyCode.value') {
        if (value !== '') currency.value = value;
      } else if (name === 'preferredName') employee.preferredName = cell;
      else if (name !== 'id' || value !== '') employee[name] = value;
    });
    employee.currencyCode = currency.value === undefined ? (currency.code ?? '') : currency;
    employee.columns = unflattenColumns(flat, cycle.columns, cycle.currency);
    employees.push(employee as EmployeeInput);
    lines.push(line);
  }
  if (problems.total > 0) throw problems.error();
  return { employees, source: { lines, header } };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) return value;
  } catch {}
}

/** The CSV column a field of an employee came from (the path below the employee). */
function columnOf(field: Path, header: readonly string[]): string {
  const [first, key, value, part] = field;
  if (first === 'currencyCode') {
    if (key === 'value') return 'currencyCode.value';
    return header.includes('currencyCode') ? 'currencyCode' : 'currencyCode.code';
  }
  if (first === 'columns' && key !== undefined) {
    // A part's own column; else the column's (a currency amount's code is below it).
    const partColumn = `columns.${key}.${part}`;
    if (value === 'value' && part !== undefined && header.includes(partColumn)) return partColumn;
    if (header.includes(`columns.${key}`)) return `columns.${key}`;
    return header.some((name) => name.startsWith(`columns.${key}.`))
      ? `columns.${key}.*`
      : OTHER_COLUMNS;
  }
  return String(first);
}

/**
 * The loader's problems of the data set as those of the CSV file: `meritCycles[0]
 * .employees[3].email: …` → `row at line 5, column "email": …`.
 */
export function csvProblems(error: ImportError, source: CsvSource): ImportError {
  const lineOf = (index: unknown) => source.lines[Number(index)];
  const problems = error.problems.map((problem): Problem => {
    const [top, , list, index, ...field] = problem.path;
    if (top !== 'meritCycles' || list !== 'employees') return problem;
    const where = field.length === 0 ? '' : `, column "${columnOf(field, source.header)}"`;
    const message = messageOf(problem, (other) => `the row at line ${lineOf(other[3])}`);
    return { path: [], message: `row at line ${lineOf(index)}${where}: ${message}` };
  });
  return new ImportError(problems, error.total);
}
