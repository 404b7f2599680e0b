// A cycle's columns as flat, typed properties (docs/odata.md, "Column properties"): one per
// column, one per part of a composite, named by one rule and read from the stored value by
// its type. The OData feed's Employee type and the bulk download's flat shapes (CSV, flat
// NDJSON) are both made of these, so the three agree on every name and value.
import { byCodePoint } from './order.js';
import type { CycleColumns } from './repository.js';
import { isCalendarDate, isDecimal, isPlainObject } from './types.js';

/**
 * An employee's own fields as flat properties, in their order, before its columns: the
 * names a column property never takes.
 */
export const EMPLOYEE_FIELDS = [
  'id',
  'meritCycleId',
  'email',
  'firstName',
  'lastName',
  'preferredName',
  'currencyCode',
  'currencyName',
  'eligibilityStatus',
] as const;
export type EmployeeField = (typeof EMPLOYEE_FIELDS)[number];

/**
 * How a column property's value is read from the stored column value: `text`, `number`,
 * `date`, `boolean`, `currency` as their types; `json`: a column of any other type, its
 * value as JSON text; `mixed`: a key whose type differs between cycles, a string as it is
 * and any other value as JSON text.
 */
export type Reading = 'text' | 'number' | 'date' | 'boolean' | 'currency' | 'json' | 'mixed';

/** A column (or a composite's part) as a flat property. Plain data: it crosses to threads. */
export interface NamedColumn {
  name: string;
  /** The column's key, and the part's key for a part of a composite column. */
  key: string;
  part: string | null;
  reading: Reading;
  /** The column's display name (a part's: the column's name and the part's key). */
  description: string;
}

const readingOfType = (type: string): Reading =>
  type === 'text' ||
  type === 'number' ||
  type === 'date' ||
  type === 'boolean' ||
  type === 'currency'
    ? type
    : 'json';

/** An OData simple identifier has at most 128 characters (CSDL, "SimpleIdentifier"). */
const MAX_IDENTIFIER = 128;

/**
 * The property name of a column key (or `key_part`): every character other than an ASCII
 * letter, digit or `_` becomes `_`, a name that does not start with a letter or `_` gets
 * one `_` in front, and it is cut to 128 characters (docs/odata.md, "Column properties").
 */
export function identifierOf(text: string): string {
  let name = text.replace(/[^A-Za-z0-9_]/g, '_');
  if (!/^[A-Za-z_]/.test(name)) name = `_${name}`;
  return name.slice(0, MAX_IDENTIFIER);
}

/** `name`, or `name_2`, `name_3`, … when `taken` has it already (cut to fit 128); taken. */
export function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = `_${n}`;
    candidate = name.slice(0, MAX_IDENTIFIER - suffix.length) + suffix;
  }
  taken.add(candidate);
  return candidate;
}

interface ColumnSlot {
  key: string;
  part: string | null;
  description: string;
  readings: Set<Reading>;
}

/** Every column (and composite part) of the cycles, by key then part. */
function columnSlots(cycles: readonly CycleColumns[]): ColumnSlot[] {
  const slots = new Map<string, ColumnSlot>();
  const note = (key: string, part: string | null, description: string, reading: Reading) => {
    const id = JSON.stringify([key, part]);
    const slot = slots.get(id);
    if (slot) slot.readings.add(reading);
    else slots.set(id, { key, part, description, readings: new Set([reading]) });
  };
  for (const cycle of cycles) {
    for (const column of cycle.columns) {
      if (column.type === 'composite') {
        for (const part of column.parts ?? []) {
          note(column.key, part.key, `${column.name}: ${part.key}`, readingOfType(part.type));
        }
      } else {
        note(column.key, null, column.name, readingOfType(column.type));
      }
    }
  }
  // A key that is a composite in one cycle and of another type in another: its whole
  // value, as text, besides the parts.
  const composites = new Set([...slots.values()].filter((s) => s.part !== null).map((s) => s.key));
  for (const slot of slots.values()) {
    if (slot.part === null && composites.has(slot.key)) slot.readings.add('mixed');
  }
  // Code-point order of key, then part: the same properties for the same schemas, whatever
  // order the cycles came in.
  return [...slots.values()].sort((a, b) =>
    a.key === b.key ? byCodePoint(a.part ?? '', b.part ?? '') : byCodePoint(a.key, b.key),
  );
}

/**
 * The column properties of these cycles' columns, in key (then part) order, named after the
 * employee's own fields (EMPLOYEE_FIELDS) have taken theirs. A key read one way in one
 * cycle and another way in another reads `mixed`.
 */
export function namedColumns(cycles: readonly CycleColumns[]): NamedColumn[] {
  const taken = new Set<string>(EMPLOYEE_FIELDS);
  return columnSlots(cycles).map((slot) => ({
    name: uniqueName(
      identifierOf(slot.part === null ? slot.key : `${slot.key}_${slot.part}`),
      taken,
    ),
    key: slot.key,
    part: slot.part,
    reading: slot.readings.size === 1 ? ([...slot.readings][0] as Reading) : 'mixed',
    description: slot.description,
  }));
}

/** A decimal as its exact text, as stored; null when it is not one. */
function decimalOf(value: unknown): string | null {
  if (typeof value === 'string') return isDecimal(value) ? value : null;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
}

/** The amount of a currency object (`{ "USD": "120000.00" }`), as its decimal text. */
function amountOf(value: unknown): string | null {
  if (!isPlainObject(value)) return null;
  const amounts = Object.values(value);
  return amounts.length === 1 ? decimalOf(amounts[0]) : null;
}

/**
 * A column property's value for an employee whose `columns` are these: `number` and
 * `currency` the decimal's text as stored (digit for digit, never through a double),
 * `date` its `YYYY-MM-DD`, `boolean` a boolean, the others a string (`json`, and a
 * non-string of `mixed`: the value's JSON text). null when the employee has no value, and
 * when a stored value does not fit a decimal, date or boolean property (loaded before
 * types were checked).
 */
export function columnValueOf(
  property: Pick<NamedColumn, 'key' | 'part' | 'reading'>,
  columns: Record<string, { value?: unknown } | undefined>,
): string | boolean | null {
  let value = columns[property.key]?.value;
  if (property.part !== null) value = isPlainObject(value) ? value[property.part] : undefined;
  if (value === null || value === undefined) return null;
  switch (property.reading) {
    case 'number':
      return decimalOf(value);
    case 'currency':
      return amountOf(value);
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'json':
      return JSON.stringify(value);
    default:
      // text and mixed: a string as it is, anything else as its JSON text.
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/** Whether a property of this reading holds a decimal (its value the decimal's text). */
export const isDecimalReading = (reading: Reading): boolean =>
  reading === 'number' || reading === 'currency';
