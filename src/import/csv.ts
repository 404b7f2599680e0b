// A merit cycle's employees from CSV (`compplan import FILE.csv --org SLUG --cycle ID`).
// The rows become the same data set a JSON import loads — the organisation and the cycle
// as stored, the cycle's employees from the file — and go through the same loader
// (importDataSet: validated record by record, one transaction). Problems name the CSV row
// (its line in the file) and column, from the loader's problems (`csvProblems`). The
// columns are those `compplan export employees` writes, so an export can be edited and
// loaded back; docs/import-format.md lists them.
import { isUtf8 } from 'node:buffer';
import { CsvError, parse } from 'csv-parse/sync';
import type { ColumnDescription } from '../columns/schema.js';
import { COLUMN_NAME, EMPLOYEE_COLUMNS, OTHER_COLUMNS, unflattenColumns } from '../export/csv.js';
import { fileProblem, type ImportError, inMiB, messageOf, type Path } from './errors.js';
import { isObject } from './records.js';
import { type DataSetInput, ELIGIBILITY_STATUSES, employeeSchema } from './schema.js';
import { MAX_SHEET_PROBLEMS, type SheetProblem, SheetProblemsError } from './sheet-problems.js';
import {
  booleanOfCell,
  dateOfCell,
  decimalOfCell,
  decodeSheet,
  enumerationOf,
  otherSeparatorIn,
  ReadAs,
  type ReadingChoices,
  readingChoices,
  type Separator,
  separatorOf,
} from './sheet-reading.js';

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

/** A CSV record: the line of the file it starts on (the header is line 1), its fields. */
type CsvRecord = SheetRow;

/** A quote where none may be: the line of the record and what (SYNTAX's words). */
class CsvSyntax extends Error {
  constructor(
    readonly line: number,
    readonly what: string,
  ) {
    super(`line ${line}: ${what}`);
  }
}

/**
 * RFC 4180 by csv-parse: CRLF, LF or CR line ends, a byte order mark skipped, blank lines
 * too. An empty field is null and a quoted empty one ("") the empty string, as the export
 * writes a null and an empty text.
 */
export function parseCsvRecords(text: string, delimiter: Separator = ','): CsvRecord[] {
  try {
    return recordsOf(text, delimiter);
  } catch (error) {
    if (error instanceof CsvSyntax) throw fileProblem(error.message);
    throw error;
  }
}

function recordsOf(text: string, delimiter: Separator): CsvRecord[] {
  const records: CsvRecord[] = [];
  // A record starts after the lines of the records before it (each has its line breaks
  // inside quoted fields and the one that ends it) and the blank lines csv-parse skipped
  // (`empty_lines`, in a record's info and on an error): `next + empty_lines`. csv-parse's
  // own count (`lines`) is not used: it takes a CRLF inside a quoted field for two lines.
  let next = 1;
  try {
    parse(text, {
      bom: true,
      delimiter,
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
    throw new CsvSyntax(next + Number(error.empty_lines), SYNTAX[error.code] ?? '');
  }
  return records;
}

const newlines = (text: string) => text.split(/\r\n|\n|\r/).length - 1;

/** Where each employee of the data set came from, to name it in problems. */
interface CsvSource {
  lines: number[];
  header: string[];
  /** Each employee's row as written. */
  cells: (string | null)[][];
  choices: ReadingChoices;
  readAs: ReadAs;
}

/** The header's problems: unknown, repeated or missing columns. */
function headerProblems(header: readonly string[], readAs: ReadAs): SheetProblem[] {
  const problems: SheetProblem[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) problems.push({ kind: 'repeated-column', row: 1, column: name });
    seen.add(name);
    if (!isColumn(name)) {
      if (readAs.choices.ignoreUnknownColumns) readAs.ignored.push(name);
      else problems.push({ kind: 'unknown-column', row: 1, column: name, value: name });
    }
  }
  if (seen.has('currencyCode') && seen.has('currencyCode.code')) {
    problems.push({ kind: 'currency-twice', row: 1, column: 'currencyCode.code' });
  }
  for (const name of REQUIRED) {
    if (!seen.has(name)) problems.push({ kind: 'missing-column', row: 1, column: name });
  }
  if (!seen.has('currencyCode') && !seen.has('currencyCode.code')) {
    problems.push({ kind: 'missing-column', row: 1, column: 'currencyCode' });
  }
  return problems;
}

/** What the CSV import reads cells by: the merit cycle's column schema and currency. */
export interface CsvCycle {
  columns: readonly ColumnDescription[];
  currency: string;
}

/**
 * The employees of a CSV file, as data set input, their cells read by the cycle's column
 * schema (columns/cells.ts) and the reading choices (sheet-reading.ts). Every problem of
 * the file is found in one pass — the header's and every row's — and refused together
 * (SheetProblemsError), each naming its row, column and value as written.
 */
export function employeesFromCsv(
  text: string,
  cycle: CsvCycle,
  readAs: ReadAs = new ReadAs(readingChoices()),
  /** Problems found in reading the file's bytes (csvText: rows that are not UTF-8). */
  earlier: readonly SheetProblem[] = [],
): { employees: EmployeeInput[]; source: CsvSource } {
  // Counted in characters here (the file was read as at most CSV_MAX_BYTES bytes).
  if (text.length > CSV_MAX_BYTES) throw csvTooLarge();
  // Nothing but white space (and a byte order mark, which trim() takes too) is empty.
  if (text.trim() === '') {
    throw fileProblem('the file is empty: it needs a header row and one row per employee');
  }
  const refuse = (problems: SheetProblem[]) => refusal([...earlier, ...problems], readAs);
  const separator = separatorOf(text);
  if (separator === undefined) {
    const firstLine = text.split(/\r\n|\n|\r/, 1)[0] ?? '';
    throw refuse([{ kind: 'mixed-separators', row: 1, value: firstLine }]);
  }
  readAs.separator = separator;
  let records: CsvRecord[];
  try {
    records = recordsOf(text, separator);
  } catch (error) {
    if (!(error instanceof CsvSyntax)) throw error;
    throw refuse([{ kind: 'quotes', row: error.line, detail: `${capital(error.what)}.` }]);
  }
  return employeesFromRows(records, cycle, readAs, earlier, separator);
}

/** The file refused with every problem found (at most MAX_SHEET_PROBLEMS kept). */
const refusal = (problems: SheetProblem[], readAs: ReadAs) =>
  new SheetProblemsError(
    problems.slice(0, MAX_SHEET_PROBLEMS),
    readAs.choices,
    readAs.words(),
    problems.length,
  );

/** A row of a spreadsheet: its number (the header is row 1) and its cells as text. */
export interface SheetRow {
  line: number;
  /** null for an empty cell; an empty string only where the file says so (CSV's ""). */
  fields: (string | null)[];
}

/**
 * The employees of a spreadsheet's rows (a CSV file's, a workbook sheet's): the first row
 * is the header. `earlier`: the problems already found in the cells (a workbook's
 * formulas); `separator`: a CSV file's, to tell a row that uses another.
 */
export function employeesFromRows(
  records: readonly SheetRow[],
  cycle: CsvCycle,
  readAs: ReadAs,
  earlier: readonly SheetProblem[] = [],
  separator?: Separator,
): { employees: EmployeeInput[]; source: CsvSource } {
  const { choices } = readAs;
  const refuse = (problems: SheetProblem[]) => refusal(problems, readAs);
  const [headerRecord, ...rows] = records;
  if (!headerRecord) {
    throw fileProblem('the file is empty: it needs a header row and one row per employee');
  }
  const header = headerRecord.fields.map((name) => (name ?? '').trim());
  const problems = [...headerProblems(header, readAs), ...earlier];
  const known = new Map(cycle.columns.map((column) => [column.key, column]));
  const schema = employeeSchema(cycle.currency);

  const employees: EmployeeInput[] = [];
  const lines: number[] = [];
  const cells: (string | null)[][] = [];
  for (const { line, fields } of rows) {
    if (fields.length !== header.length) {
      const mixed =
        separator !== undefined && header.length > 1 && otherSeparatorIn(fields, separator);
      problems.push(
        mixed
          ? { kind: 'mixed-separators', row: line, value: fields.join(separator) }
          : {
              kind: 'field-count',
              row: line,
              detail: `This row has ${fields.length} values; the first row has ${header.length} columns.`,
            },
      );
      continue;
    }
    const rowProblems: SheetProblem[] = [];
    const report = (
      kind: SheetProblem['kind'],
      column: string,
      value: string | null,
      detail?: string,
    ) =>
      rowProblems.push({ kind, row: line, column, value, ...(detail !== undefined && { detail }) });
    const employee: Record<string, unknown> = {};
    const currency: { code?: string; value?: string } = {};
    const flat: Record<string, unknown> = {};
    header.forEach((name, index) => {
      const cell = fields[index] ?? null;
      const value = cell ?? '';
      if (name === OTHER_COLUMNS) {
        if (value === '') return;
        const others = parseObject(value);
        if (others === undefined) report('other-columns', name, cell);
        else {
          for (const [key, other] of Object.entries(others)) {
            if (COLUMN_NAME.test(key)) flat[key] = other;
            else report('other-columns', name, cell, `“${key}” is not a column name.`);
          }
        }
      } else if (name.startsWith('columns.')) {
        const read = readColumnCell(name, cell, known, readAs);
        if (read.kind) report(read.kind, name, cell);
        else flat[name] = read.cell;
      } else if (name === 'currencyCode' || name === 'currencyCode.code') {
        currency.code = /^[a-z]{3}$/i.test(value.trim()) ? value.trim().toUpperCase() : value;
      } else if (name === 'currencyCode.value') {
        if (value !== '') currency.value = value;
      } else if (name === 'eligibilityStatus') {
        employee.eligibilityStatus =
          enumerationOf(value, ELIGIBILITY_STATUSES, 'eligibilityStatus', readAs) ?? value;
      } else if (name === 'preferredName') employee.preferredName = cell;
      else if (name !== 'id' || value !== '') {
        if (isColumn(name)) employee[name] = value;
      }
    });
    employee.currencyCode = currency.value === undefined ? (currency.code ?? '') : currency;
    employee.columns = unflattenColumns(flat, cycle.columns, cycle.currency);
    // The loader's own checks, now, so that every cell's problem is found in this pass;
    // a cell already reported is not reported twice.
    const checked = schema.safeParse(employee);
    if (!checked.success) {
      const reported = new Set(rowProblems.map((problem) => problem.column));
      for (const issue of checked.error.issues) {
        const column = columnOf(issue.path as Path, header);
        // A column the header lacks is the header's problem, reported once.
        const missing = !column.startsWith('columns.') && !header.includes(column);
        if (reported.has(column) || missing) continue;
        reported.add(column);
        const index = header.indexOf(column);
        const [kind, detail] = kindOfIssue(issue.path as Path, issue.message);
        report(kind, column, index === -1 ? null : (fields[index] ?? null), detail);
      }
    }
    problems.push(...rowProblems);
    employees.push(employee as EmployeeInput);
    lines.push(line);
    cells.push(fields);
  }
  if (problems.length > 0) throw refuse(problems);
  return { employees, source: { lines, header, cells, choices, readAs } };
}

/**
 * A CSV file's bytes as text, in the chosen encoding; UTF-8 strictly: each row with a byte
 * that is not UTF-8 is a problem of its own (the file is most likely Windows-1252, which
 * is a choice). The file is read on all the same, each such byte as U+FFFD, so that one
 * check reports the file's other problems (its header, dates, amounts) with these.
 */
export function csvText(
  bytes: Uint8Array | string,
  readAs: ReadAs,
): { text: string; problems: SheetProblem[] } {
  if (typeof bytes === 'string') {
    return { text: decodeSheet(Buffer.from(bytes), 'utf-8', readAs, String), problems: [] };
  }
  const problems: SheetProblem[] = [];
  const text = decodeSheet(bytes, readAs.choices.encoding, readAs, (utf8) => {
    if (isUtf8(utf8)) return Buffer.from(utf8.buffer, utf8.byteOffset, utf8.length).toString();
    const text = new TextDecoder().decode(utf8);
    text.split(/\r\n|\n|\r/).forEach((line, index) => {
      if (line.includes('\ufffd')) problems.push({ kind: 'encoding', row: index + 1, value: line });
    });
    return text;
  });
  return { text, problems };
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A `columns.KEY` or `columns.KEY.PART` cell read by its stored type and the choices. */
function readColumnCell(
  name: string,
  cell: string | null,
  known: ReadonlyMap<string, ColumnDescription>,
  readAs: ReadAs,
): { cell: string | null; kind?: SheetProblem['kind'] } {
  if (cell === null || cell === '') return { cell };
  const [, key, part] = COLUMN_NAME.exec(name) ?? [];
  const stored = key === undefined ? undefined : known.get(key);
  const type =
    part === undefined ? stored?.type : stored?.parts?.find((known) => known.key === part)?.type;
  const { choices } = readAs;
  switch (type) {
    case 'date': {
      const date = dateOfCell(cell, choices.dates);
      return date === undefined ? { cell, kind: 'date' } : { cell: date };
    }
    case 'number': {
      const decimal = decimalOfCell(cell, choices.amounts);
      return decimal === undefined ? { cell, kind: 'number' } : { cell: decimal };
    }
    case 'currency': {
      const decimal = decimalOfCell(cell, choices.amounts);
      return decimal === undefined ? { cell, kind: 'amount' } : { cell: decimal };
    }
    case 'boolean': {
      const value = booleanOfCell(cell, readAs);
      return value === undefined ? { cell, kind: 'boolean' } : { cell: String(value) };
    }
    default:
      return { cell };
  }
}

/** A loader's problem of a field as a kind (its own words for the kinds without one). */
function kindOfIssue(path: Path, message: string): [SheetProblem['kind'], string?] {
  const [field] = path;
  if (message === 'must not be empty') return ['empty'];
  if (message.startsWith('must be at most')) return ['too-long'];
  if (field === 'email') return ['email'];
  if (field === 'eligibilityStatus') return ['eligibility'];
  if (field === 'currencyCode') return ['currency-code'];
  if (message.startsWith("must be the merit cycle's currency")) return ['cycle-currency'];
  return ['other', `${capital(message)}.`];
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
 * The loader's problems of the data set (those across rows, such as a repeated email) as
 * those of the CSV file: `meritCycles[0].employees[3].email: …` → row 5, column email.
 */
export function csvProblems(error: ImportError, source: CsvSource): ImportError {
  const lineOf = (index: unknown) => source.lines[Number(index)];
  const problems = error.kept.map((problem): SheetProblem => {
    const [top, , list, index, ...field] = problem.path;
    if (top !== 'meritCycles' || list !== 'employees') {
      return { kind: 'other', detail: capital(messageOf(problem)) };
    }
    const column = field.length === 0 ? undefined : columnOf(field, source.header);
    const at = column === undefined ? -1 : source.header.indexOf(column);
    const value = at === -1 ? undefined : (source.cells[Number(index)]?.[at] ?? null);
    const message = messageOf(problem, (other) => `row ${lineOf(other[3])}`);
    const repeated = problem.message.startsWith('repeats the email');
    return {
      kind: repeated ? 'repeated-email' : 'other',
      row: lineOf(index),
      ...(column !== undefined && { column }),
      ...(value !== undefined && { value }),
      detail: `${capital(message)}.`,
    };
  });
  return new SheetProblemsError(problems, source.choices, source.readAs.words(), error.total);
}
