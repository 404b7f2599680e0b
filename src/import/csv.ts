// A merit cycle's employees from CSV (`compplan import FILE.csv --org SLUG --cycle ID`).
// The rows become the same data set a JSON import loads — the organisation and the cycle
// as stored, the cycle's employees from the file — and go through the same loader
// (importDataSet: validated record by record, one transaction). Problems name the CSV
// row (its line in the file) and column instead of the JSON path. The columns are those
// `compplan export employees` writes, so an export can be edited and loaded back;
// docs/import-format.md lists them.
import { cappedImportError, ImportError, MAX_PROBLEMS } from './errors.js';
import type { DataSetInput } from './schema.js';

type EmployeeInput = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];
interface ColumnInput {
  name: string;
  type: string;
  value: unknown;
}

/** A header cell and the employee field it fills. */
const FIELDS: Record<string, keyof EmployeeInput | 'currencyCode.code' | 'currencyCode.value'> = {
  id: 'id',
  email: 'email',
  firstName: 'firstName',
  lastName: 'lastName',
  preferredName: 'preferredName',
  currencyCode: 'currencyCode.code',
  'currencyCode.code': 'currencyCode.code',
  'currencyCode.value': 'currencyCode.value',
  eligibilityStatus: 'eligibilityStatus',
};
const REQUIRED = ['email', 'firstName', 'lastName', 'eligibilityStatus'];
/** Columns that the export could not fit in the header, as a JSON object of flat names. */
export const OTHER_COLUMNS = 'columns.other';
const COLUMN = /^columns\.([^.]+)(?:\.([^.]+))?$/;

// The limits of a CSV file (docs/import-format.md, "Limits"). It is read whole, then its
// rows, then the employees made of them are held (see employeesFromCsv): a file of 4 MiB
// peaks near 300 MB (28,000 employees of 150 bytes a row; an export's row of ~250 bytes
// makes it some 17,000). Rows of a few bytes (`,,,,,`) would make 700,000 employees of
// 4 MiB, hence a limit on rows too, which rows of employees never reach first.
export const CSV_MAX_BYTES = 4 * 1024 * 1024;
export const CSV_MAX_TEXT = '4 MiB';
export const CSV_MAX_ROWS = 50_000;

/** The problem of a CSV file that passes CSV_MAX_BYTES. */
export function csvTooLarge(): ImportError {
  return new ImportError([
    `the file is larger than ${CSV_MAX_TEXT}, the limit for a CSV import (one merit cycle); give a larger data set as NDJSON`,
  ]);
}

export interface CsvRecord {
  /** The line of the file the record starts on (the header is line 1). */
  line: number;
  fields: string[];
}

/** RFC 4180 (CRLF or LF line ends, quotes doubled); a UTF-8 byte order mark is skipped. */
export function parseCsvRecords(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  let line = 1;
  let recordLine = 1;
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const endRecord = () => {
    fields.push(field);
    // A blank line is no record.
    if (!(fields.length === 1 && fields[0] === '' && !wasQuoted)) {
      // The header and CSV_MAX_ROWS rows.
      if (records.length > CSV_MAX_ROWS) {
        throw new ImportError([
          `line ${recordLine}: more than ${CSV_MAX_ROWS.toLocaleString('en')} rows, the limit for a CSV import (one merit cycle); give a larger data set as NDJSON`,
        ]);
      }
      records.push({ line: recordLine, fields });
    }
    fields = [];
    field = '';
    wasQuoted = false;
  };
  for (let i = 0; i < body.length; i++) {
    const char = body[i];
    if (quoted) {
      if (char === '"') {
        if (body[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (char === '\n') line++;
        field += char;
      }
    } else if (char === '"') {
      if (field !== '') {
        throw new ImportError([
          `line ${line}: a quote inside an unquoted field; quote the whole field and double the quote ("")`,
        ]);
      }
      quoted = true;
      wasQuoted = true;
    } else if (char === ',') {
      fields.push(field);
      field = '';
      wasQuoted = false;
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && body[i + 1] === '\n') i++;
      endRecord();
      line++;
      recordLine = line;
    } else {
      if (wasQuoted) {
        throw new ImportError([`line ${line}: text after the closing quote of a field`]);
      }
      field += char;
    }
  }
  if (quoted) throw new ImportError([`line ${recordLine}: a quoted field is never closed`]);
  if (field !== '' || fields.length > 0 || wasQuoted) endRecord();
  return records;
}

/** `department` → `Department`, `costCenter` → `Cost center`: a column's display name. */
export function columnDisplayName(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Where each employee of the data set came from, to name it in problems. */
export interface CsvSource {
  lines: number[];
  header: string[];
}

export interface CsvEmployees {
  employees: EmployeeInput[];
  source: CsvSource;
}

/** The employees of a CSV file, as data set input; problems name line and column. */
export function employeesFromCsv(text: string): CsvEmployees {
  // Counted in characters here (the file was read as at most CSV_MAX_BYTES bytes).
  if (text.length > CSV_MAX_BYTES) throw csvTooLarge();
  const records = parseCsvRecords(text);
  const [headerRecord, ...rows] = records;
  // Nothing but white space (and a byte order mark, which trim() takes too) is empty.
  if (!headerRecord || text.trim() === '')
    throw new ImportError(['the file is empty: it needs a header row and one row per employee']);
  const header = headerRecord.fields.map((name) => name.trim());
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) problems.push(`header: column "${name}" appears twice`);
    seen.add(name);
    if (!(name in FIELDS) && !COLUMN.test(name) && name !== OTHER_COLUMNS) {
      problems.push(
        `header: "${name}" is not a column of this format (see docs/import-format.md, "CSV")`,
      );
    }
  }
  if (seen.has('currencyCode') && seen.has('currencyCode.code')) {
    problems.push('header: give the currency as "currencyCode" or "currencyCode.code", not both');
  }
  for (const name of REQUIRED) {
    if (!seen.has(name)) problems.push(`header: the column "${name}" is missing`);
  }
  if (!seen.has('currencyCode') && !seen.has('currencyCode.code')) {
    problems.push('header: the column "currencyCode" (or "currencyCode.code") is missing');
  }
  if (problems.length > 0) throw new ImportError(problems);

  const employees: EmployeeInput[] = [];
  const lines: number[] = [];
  // Only the first MAX_PROBLEMS are kept: a file with a problem in every row must not
  // fill memory with them.
  let total = 0;
  const report = (problem: string) => {
    total++;
    if (problems.length < MAX_PROBLEMS) problems.push(problem);
  };
  for (const record of rows) {
    if (record.fields.length !== header.length) {
      report(
        `row at line ${record.line}: has ${record.fields.length} fields, the header has ${header.length}`,
      );
      continue;
    }
    const employee: Record<string, unknown> = {};
    const currency: { code?: string; value?: string } = {};
    const columns: Record<string, ColumnInput> = {};
    const flat = new Map<string, string | unknown>();
    header.forEach((name, index) => {
      const value = record.fields[index] ?? '';
      const field = FIELDS[name];
      if (field === 'currencyCode.code') currency.code = value;
      else if (field === 'currencyCode.value') {
        if (value !== '') currency.value = value;
      } else if (field === 'preferredName') employee.preferredName = value === '' ? null : value;
      else if (field === 'id') {
        if (value !== '') employee.id = value;
      } else if (field) employee[field] = value;
      else if (name === OTHER_COLUMNS) {
        if (value === '') return;
        let others: unknown;
        try {
          others = JSON.parse(value);
        } catch {
          report(`row at line ${record.line}, column "${name}": must be a JSON object`);
          return;
        }
        if (typeof others !== 'object' || others === null || Array.isArray(others)) {
          report(`row at line ${record.line}, column "${name}": must be a JSON object`);
          return;
        }
        for (const [key, other] of Object.entries(others)) flat.set(key, other);
      } else if (value !== '') flat.set(name, value);
    });
    for (const [name, value] of flat) {
      const match = COLUMN.exec(name);
      if (!match?.[1]) {
        report(
          `row at line ${record.line}, column "${OTHER_COLUMNS}": "${name}" is not a column name`,
        );
        continue;
      }
      const [, key, part] = match;
      if (part === undefined) {
        // A value from columns.other that is not text keeps its JSON value, as type json.
        const type = typeof value === 'string' ? 'text' : 'json';
        columns[key] = { name: columnDisplayName(key), type, value: value as string };
      } else {
        const existing = columns[key];
        const parts =
          existing?.type === 'composite' ? (existing.value as Record<string, unknown>) : {};
        parts[part] = value;
        columns[key] = { name: columnDisplayName(key), type: 'composite', value: parts as never };
      }
    }
    employee.currencyCode = currency.value === undefined ? (currency.code ?? '') : currency;
    employee.columns = columns;
    employees.push(employee as unknown as EmployeeInput);
    lines.push(record.line);
  }
  if (total > 0) throw cappedImportError(problems, total);
  return { employees, source: { lines, header } };
}

/** The CSV column a field path of an employee came from. */
function columnOf(path: string, header: readonly string[]): string {
  if (path.startsWith('currencyCode')) {
    if (path.includes('value')) return 'currencyCode.value';
    return header.includes('currencyCode') ? 'currencyCode' : 'currencyCode.code';
  }
  const column = /^columns(?:\.([\w$]+)|\["([^"]+)"\])(?:\.value)?(?:\.([\w$]+))?/.exec(path);
  if (column) {
    const key = column[1] ?? column[2] ?? '';
    return column[3]
      ? `columns.${key}.${column[3]}`
      : header.includes(`columns.${key}`)
        ? `columns.${key}`
        : `columns.${key}.*`;
  }
  return path.split(/[.[]/)[0] ?? path;
}

/**
 * An ImportError of the data set (JSON paths) as one of the CSV file: `meritCycles[0]
 * .employees[3].email: …` → `row at line 5, column "email": …`.
 */
export function csvImportError(error: ImportError, source: CsvSource): ImportError {
  const problems = error.problems.map((problem) => {
    const match = /^meritCycles\[0\]\.employees\[(\d+)\]\.?([^:]*): (.*)$/s.exec(problem);
    if (!match) return problem;
    const line = source.lines[Number(match[1])];
    const field = match[2] ?? '';
    const message = (match[3] ?? '').replace(/employees\[(\d+)\]/g, (_all, index: string) => {
      return `the row at line ${source.lines[Number(index)]}`;
    });
    return field === ''
      ? `row at line ${line}: ${message}`
      : `row at line ${line}, column "${columnOf(field, source.header)}": ${message}`;
  });
  return new ImportError(problems);
}
