// CSV as RFC 4180 writes it, and as spreadsheets open it: CRLF line ends, a field quoted
// when it holds a comma, a quote, a line break or a leading or trailing space, quotes
// doubled inside. Objects are flattened to dotted column names
// (`columns.employee.jobTitle`), so that every value has a column of its own; the CSV
// import reads them back (unflattenColumns).

/** Columns first seen after the first page of employees, as JSON: nothing is dropped. */
export const OTHER_COLUMNS = 'columns.other';

/** An employee's own columns, before its `columns.…`: what the CSV import reads back. */
export const EMPLOYEE_COLUMNS = [
  'id',
  'email',
  'firstName',
  'lastName',
  'preferredName',
  'currencyCode.code',
  'currencyCode.value',
  'eligibilityStatus',
];

/** An employee as the export flattens it (the API's form, or the client's type of it). */
export interface FlattenableEmployee {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  preferredName: string | null;
  currencyCode: { code?: string; value?: string };
  eligibilityStatus: string;
  columns: Record<string, { name: string; type: string; value?: unknown }>;
}

/** An employee's fields under the names of the export's header. */
export function flatEmployee(employee: FlattenableEmployee): Record<string, unknown> {
  return {
    id: employee.id,
    email: employee.email,
    firstName: employee.firstName,
    lastName: employee.lastName,
    preferredName: employee.preferredName,
    'currencyCode.code': employee.currencyCode.code,
    'currencyCode.value': employee.currencyCode.value,
    eligibilityStatus: employee.eligibilityStatus,
    ...flattenColumns(employee.columns),
  };
}

/**
 * A flattened employee's CSV line under `header` (`known`: its names as a set), whose
 * last column, columns.other, holds as JSON whatever the header has no column for.
 */
export function employeeCsvRow(
  header: readonly string[],
  known: ReadonlySet<string>,
  row: Record<string, unknown>,
): string {
  const values = header.map((name) => row[name]);
  const others = Object.fromEntries(Object.entries(row).filter(([name]) => !known.has(name)));
  values[values.length - 1] = Object.keys(others).length > 0 ? others : undefined;
  return csvRow(values);
}

/** One field, quoted when it has to be. null and undefined are empty fields. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/**
 * An employee's columns flattened: a `text` column (or any column whose value is not an
 * object) is `columns.KEY`; a `composite` column gives one `columns.KEY.PART` per part.
 */
export function flattenColumns(
  columns: Record<string, { name: string; type: string; value?: unknown }>,
): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(columns)) {
    const value = column.value;
    if (
      column.type === 'composite' &&
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value)
    ) {
      for (const [part, partValue] of Object.entries(value))
        flat[`columns.${key}.${part}`] = partValue;
    } else {
      flat[`columns.${key}`] = value;
    }
  }
  return flat;
}

/** A flattened column's name: `columns.KEY` or `columns.KEY.PART`, KEY and PART captured. */
export const COLUMN_NAME = /^columns\.([^.]+)(?:\.([^.]+))?$/;

/**
 * Flattened columns back as an employee's columns, as the CSV import reads them:
 * `columns.KEY` is a `text` column (`json` when its value is not text, as columns.other
 * can give), `columns.KEY.PART` a part of a `composite` column, each named from its key. A
 * name that COLUMN_NAME does not match is left out.
 */
export function unflattenColumns(
  flat: Record<string, unknown>,
): Record<string, { name: string; type: string; value: unknown }> {
  // A Map, then own properties: a key such as `__proto__` assigned to an object would set
  // its prototype and be lost; column keys are kept exactly as the import keeps them.
  const columns = new Map<string, { name: string; type: string; value: unknown }>();
  for (const [name, value] of Object.entries(flat)) {
    const [, key, part] = COLUMN_NAME.exec(name) ?? [];
    if (key === undefined) continue;
    const existing = columns.get(key);
    const parts = existing?.type === 'composite' ? (existing.value as object) : {};
    columns.set(
      key,
      part === undefined
        ? { name: columnDisplayName(key), type: typeof value === 'string' ? 'text' : 'json', value }
        : { name: columnDisplayName(key), type: 'composite', value: { ...parts, [part]: value } },
    );
  }
  return Object.fromEntries(columns);
}

/** `department` → `Department`, `costCenter` → `Cost center`: a column's display name. */
function columnDisplayName(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Dotted names first by their place in `preferred`, the rest in code-point order. */
export function orderColumns(names: Iterable<string>, preferred: readonly string[] = []): string[] {
  const rank = (name: string) => {
    const index = preferred.indexOf(name);
    return index === -1 ? preferred.length : index;
  };
  return [...new Set(names)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
