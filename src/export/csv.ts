// CSV as RFC 4180 writes it, and as spreadsheets open it: CRLF line ends, a field quoted
// when it holds a comma, a quote, a line break or a leading or trailing space, quotes
// doubled inside. Objects are flattened to dotted column names
// (`columns.employee.jobTitle`), so that every value has a column of its own; the CSV
// import reads them back (unflattenColumns). Each value is one cell as columns/cells.ts
// writes it for its type.
import { cellOf, partCellOf, partOfCell, valueOfCell } from '../columns/cells.js';
import type { ColumnDescription } from '../columns/schema.js';
import { isPlainObject } from '../columns/types.js';

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

/**
 * Writes employees as CSV lines under `header`: each of the header's names takes the
 * employee's field or column cell of that name (the names forEachColumnCell gives), and
 * the last column, columns.other, holds as JSON the cells the header has no column for
 * (in the order met; none: an empty field).
 *
 * Made once per header, for speed (the bulk download writes a million employees with it):
 * each employee fills one array of cells, with no object in between, and a column's place
 * is found by its key (and part) as JSON.parse gave them, not by a name built for it.
 */
export function employeeRowWriter(
  header: readonly string[],
): (employee: FlattenableEmployee) => string {
  const places = new Map<string, number>();
  // A name the header has twice (a column keyed `other`; `a.b` beside a composite `a`'s
  // part `b`) takes the same cell in each place.
  const repeats: [place: number, first: number][] = [];
  header.forEach((name, place) => {
    const first = places.get(name);
    if (first === undefined) places.set(name, place);
    else repeats.push([place, first]);
  });
  // Each name `columns.REST` under every key (and part) that writes it: REST as a key, and
  // REST split at each of its dots as a key and a part.
  const keyPlaces = new Map<string, number>();
  const partPlaces = new Map<string, Map<string, number>>();
  for (const [name, place] of places) {
    if (!name.startsWith(COLUMNS)) continue;
    const rest = name.slice(COLUMNS.length);
    keyPlaces.set(rest, place);
    for (let dot = rest.indexOf('.'); dot !== -1; dot = rest.indexOf('.', dot + 1)) {
      const key = rest.slice(0, dot);
      const parts = partPlaces.get(key) ?? new Map<string, number>();
      partPlaces.set(key, parts.set(rest.slice(dot + 1), place));
    }
  }
  const fieldPlaces = EMPLOYEE_COLUMNS.map((name) => places.get(name));
  const last = header.length - 1;
  // The line being written: its cells, and those the header has no column for. Set anew
  // for each employee; `put` and `putColumn` are made once, not once an employee.
  let cells: unknown[] = [];
  let others: Record<string, unknown> | undefined;
  const putOther = (name: string, value: unknown) => {
    others ??= {};
    others[name] = value;
  };
  const put = (field: number, value: unknown) => {
    const place = fieldPlaces[field];
    if (place !== undefined) cells[place] = value;
    else putOther(EMPLOYEE_COLUMNS[field] as string, value);
  };
  const putColumn = (key: string, part: string | undefined, cell: string | null) => {
    const place = part === undefined ? keyPlaces.get(key) : partPlaces.get(key)?.get(part);
    if (place !== undefined) cells[place] = cell;
    else putOther(columnName(key, part), cell);
  };
  return (employee) => {
    cells = new Array(header.length);
    others = undefined;
    // In EMPLOYEE_COLUMNS' order.
    put(0, employee.id);
    put(1, employee.email);
    put(2, employee.firstName);
    put(3, employee.lastName);
    put(4, employee.preferredName);
    put(5, employee.currencyCode.code);
    put(6, employee.currencyCode.value);
    put(7, employee.eligibilityStatus);
    forEachColumnCell(employee.columns, putColumn);
    for (const [place, first] of repeats) cells[place] = cells[first];
    cells[last] = others;
    let line = csvField(cells[0]);
    for (let place = 1; place < cells.length; place++) line += `,${csvField(cells[place])}`;
    return `${line}\r\n`;
  };
}

/**
 * One field, quoted when it has to be. null and undefined are empty fields; the empty
 * string is a quoted empty field (""), so that a reader can tell the two apart.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  if (text === '') return '""';
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

const COLUMNS = 'columns.';

/** A flattened column's name: `columns.KEY`, or `columns.KEY.PART` for a composite's part. */
export const columnName = (key: string, part: string | undefined) =>
  part === undefined ? `${COLUMNS}${key}` : `${COLUMNS}${key}.${part}`;

/**
 * An employee's columns flattened to cells (columns/cells.ts), each given to `put` with its
 * key, and part (its name is columnName's): a composite column gives each of its parts a
 * cell (none when it is null: its part cells are empty), every other column one cell.
 */
export function forEachColumnCell(
  columns: FlattenableEmployee['columns'],
  put: (key: string, part: string | undefined, cell: string | null) => void,
): void {
  for (const key of Object.keys(columns)) {
    const column = columns[key] as FlattenableEmployee['columns'][string];
    const value = column.value ?? null;
    if (column.type === 'composite' && (value === null || isPlainObject(value))) {
      if (value === null) continue;
      for (const part of Object.keys(value)) put(key, part, partCellOf(value[part]));
    } else {
      put(key, undefined, cellOf(column.type, value));
    }
  }
}

/** A flattened column's name: `columns.KEY` or `columns.KEY.PART`, KEY and PART captured. */
export const COLUMN_NAME = /^columns\.([^.]+)(?:\.([^.]+))?$/;

/**
 * The `columns.…` header of a merit cycle's employees, from its column schema: a column a
 * key, a composite one a column a part, in the schema's order (by key, parts by key). A key
 * or part with a dot has no column name of its own: it is written to columns.other.
 */
export function columnsHeader(schema: readonly ColumnDescription[]): string[] {
  return schema
    .flatMap((column) =>
      column.type === 'composite' && column.parts && column.parts.length > 0
        ? column.parts.map((part) => `columns.${column.key}.${part.key}`)
        : [`columns.${column.key}`],
    )
    .filter((name) => COLUMN_NAME.test(name));
}

type ImportColumn = { name: string; type: string; value: unknown };

/**
 * Flattened columns (cells, and the values of columns.other) back as an employee's columns,
 * as the CSV import reads them, by the merit cycle's stored column schema (`schema`) and
 * currency: a known key takes its name and type from the schema and its value from the
 * cell as its type reads it; a new `columns.KEY` is a `text` column (`json` when a value
 * of columns.other is not text), a new `columns.KEY.PART` a part of a `composite` one,
 * each named from its key. An empty cell (null) is a null value; an empty part is left
 * out, and a composite column whose parts are all empty is null. A name that COLUMN_NAME
 * does not match is left out.
 */
export function unflattenColumns(
  flat: Record<string, unknown>,
  schema: readonly ColumnDescription[] = [],
  currency = '',
): Record<string, ImportColumn> {
  const known = new Map(schema.map((column) => [column.key, column]));
  // A Map, then own properties: a key such as `__proto__` assigned to an object would set
  // its prototype and be lost; column keys are kept exactly as the import keeps them.
  const columns = new Map<string, ImportColumn>();
  for (const [name, cell] of Object.entries(flat)) {
    const [, key, part] = COLUMN_NAME.exec(name) ?? [];
    if (key === undefined) continue;
    const stored = known.get(key);
    const columnName = stored?.name ?? columnDisplayName(key);
    if (part === undefined) {
      const type = stored?.type ?? (typeof cell === 'string' || cell === null ? 'text' : 'json');
      const value = typeof cell === 'string' && stored ? valueOfCell(type, cell, currency) : cell;
      columns.set(key, { name: columnName, type, value });
      continue;
    }
    const existing = columns.get(key);
    const parts =
      existing?.type === 'composite' && isPlainObject(existing.value) ? existing.value : {};
    if (cell !== null) {
      const partType = stored?.parts?.find((known) => known.key === part)?.type;
      const value = typeof cell === 'string' ? partOfCell(partType, cell, currency) : cell;
      Object.defineProperty(parts, part, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    columns.set(key, { name: columnName, type: 'composite', value: parts });
  }
  for (const column of columns.values()) {
    if (column.type === 'composite' && isPlainObject(column.value)) {
      if (Object.keys(column.value).length === 0) column.value = null;
    }
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
