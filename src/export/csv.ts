// CSV as RFC 4180 writes it, and as spreadsheets open it: CRLF line ends, a field quoted
// when it holds a comma, a quote, a line break or a leading or trailing space, quotes
// doubled inside. Objects are flattened to dotted column names
// (`columns.employee.jobTitle`), so that every value has a column of its own.

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

/** Dotted names first by their place in `preferred`, the rest in code-point order. */
export function orderColumns(names: Iterable<string>, preferred: readonly string[] = []): string[] {
  const rank = (name: string) => {
    const index = preferred.indexOf(name);
    return index === -1 ? preferred.length : index;
  };
  return [...new Set(names)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
