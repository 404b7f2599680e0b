// An employee's line of the flat CSV (flat-row.ts), written once, when the import stores the
// employee, so that a download of the flat CSV sends it as stored instead of parsing the
// employee's JSON text again on every read (docs/bulk-download.md, "Lines made at import").
//
// A line's values depend on the employee and on the cycle's layout: its columns (each
// column's or part's key and how it is read) and its currency. While the import reads an
// employee it does not know the cycle's final columns (they are what all its employees
// hold), so each line is written against the employee's own columns, with the key of that
// layout (flatLineKey). A download whose layout has the same key sends the stored line;
// any other employee — one without some column of the cycle, one stored before lines were
// kept, a cycle whose currency changed, a key that hides a column — is converted from its
// JSON text. The key holds no property names: a column's name depends on the key that
// reads it (flatLayout), and a line holds only values.
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import type { CycleColumns } from '../columns/repository.js';
import type { ColumnDescription } from '../columns/schema.js';
import { isPlainObject, partTypeOf } from '../columns/types.js';
import type { FlattenableEmployee } from './csv.js';
import { type FlatLayout, flatLayout, flatRowWriter } from './flat-row.js';

// Part of every key: a release that writes lines differently changes it, and the lines
// stored before are converted again instead of being sent.
const LINE_VERSION = 1;

// The line's first two fields, the employee's id and its cycle's, are put in front by the
// database when the employee is stored (the import knows neither while it reads the file).
const FIELDS_PUT_IN_FRONT = 2;

// An employee's row keeps its place in a page of SQLite's employees table: with 16 KiB
// pages (db/connect.ts, SQLITE_PAGE_BYTES) SQLite keeps up to (16,384 − 12) × 64 / 255 − 23
// = 4,086 bytes of a WITHOUT ROWID row in its page and moves the rest to overflow pages,
// which made every read of such a row several times slower. A line is kept only while the
// employee's JSON text and its line together take at most this many bytes, leaving the
// rest for the row's other columns (ids, names, email: about 400 bytes). An employee of
// larger texts is converted from its JSON text, as before lines were kept.
const ROW_TEXTS_BYTES = 3_600;

// The bulk download joins the texts it reads with U+001E (employees/repository.ts); a JSON
// text never holds it, but a CSV line may (a name with that control character): such an
// employee keeps no line.
const TEXT_SEPARATOR = '\u001e';

/** A JSON text's first byte, `{`: a stored line begins with its employee's id instead. */
export const JSON_TEXT_START = 0x7b;

/** What the import stores of an employee's line. */
export interface StoredFlatLine {
  /** The key of the layout it was written against. */
  key: string;
  /** The line after `id,meritCycleId,`, its CRLF included. */
  tail: string;
}

/** The key of the lines `layout` writes: what their values depend on, hashed. */
export function flatLineKey(layout: FlatLayout): string {
  const shape = layout.properties.map((property) =>
    property.source === 'column'
      ? [property.column.key, property.column.part, property.column.reading]
      : property.source === 'field'
        ? property.field
        : 0,
  );
  return createHash('sha256')
    .update(JSON.stringify([LINE_VERSION, layout.currency, shape]))
    .digest('base64url')
    .slice(0, 22);
}

/** The schema of an employee's own columns, as the cycle's would be with it alone. */
function ownColumns(columns: FlattenableEmployee['columns']): ColumnDescription[] {
  return Object.keys(columns).map((key) => {
    const { name, type, value } = columns[key] as FlattenableEmployee['columns'][string];
    const parts =
      type !== 'composite'
        ? null
        : isPlainObject(value)
          ? Object.keys(value).map((part) => ({ key: part, type: partTypeOf(value[part]) }))
          : [];
    return { key, name, type, parts };
  });
}

/** An employee as the import reads it: no id yet, perhaps no preferred name. */
type ImportedEmployee = Omit<FlattenableEmployee, 'id' | 'preferredName'> & {
  preferredName?: string | null;
};

interface LineWriter {
  key: string;
  write: (employee: FlattenableEmployee) => string;
}

// Employees of a cycle mostly hold the same columns: one writer for each set of them.
const MAX_WRITERS = 256;

/** Writes employees' stored lines (the import's intake, one per file). */
export class FlatLineWriter {
  private readonly writers = new Map<string, LineWriter>();

  /**
   * The stored line of `employee` in a cycle of `currency`, whose JSON text takes
   * `textBytes`; null when it can keep none.
   */
  lineOf(employee: ImportedEmployee, currency: string, textBytes: number): StoredFlatLine | null {
    const signature = signatureOf(employee.columns, currency);
    let writer = this.writers.get(signature);
    if (!writer) {
      if (this.writers.size >= MAX_WRITERS) this.writers.clear();
      writer = writerOf({ meritCycleId: '', currency, columns: ownColumns(employee.columns) });
      this.writers.set(signature, writer);
    }
    // The tail's properties never read the id, and read no preferred name as null.
    const tail = writer.write(employee as FlattenableEmployee);
    if (textBytes + Buffer.byteLength(tail) > ROW_TEXTS_BYTES) return null;
    return tail.includes(TEXT_SEPARATOR) ? null : { key: writer.key, tail };
  }
}

/**
 * What a line's writer depends on of an employee: its cycle's currency, its columns' keys
 * and types, a composite's parts and their types; each text after its length, so that no
 * two differ only in where one ends. Made for every employee: cheaper than its columns'
 * schema (ownColumns), which is made once a writer.
 */
function signatureOf(columns: FlattenableEmployee['columns'], currency: string): string {
  let signature = currency;
  for (const key in columns) {
    const { type, value } = columns[key] as FlattenableEmployee['columns'][string];
    signature += `|${key.length}:${key}${type.length}:${type}`;
    if (type !== 'composite' || !isPlainObject(value)) continue;
    for (const part in value) signature += `/${part.length}:${part}${partTypeOf(value[part])}`;
  }
  return signature;
}

function writerOf(cycle: CycleColumns): LineWriter {
  const layout = flatLayout(cycle, [cycle]);
  const tail = { ...layout, properties: layout.properties.slice(FIELDS_PUT_IN_FRONT) };
  return { key: flatLineKey(layout), write: flatRowWriter(tail, 'csv') };
}

/**
 * The list position of a stored line — the employee's last name, first name and id — read
 * from its fields (id, meritCycleId, email, firstName, lastName, …) as CSV.
 */
export function listPositionOfLine(line: string): [string, string, string] {
  const [fields] = parse(line, { to: 1, relax_column_count: true }) as string[][];
  const [id, , , firstName, lastName] = fields ?? [];
  if (id === undefined || firstName === undefined || lastName === undefined) {
    throw new Error('a stored flat line without its first five fields');
  }
  return [lastName, firstName, id];
}
