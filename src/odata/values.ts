// A column property's value as the feed serves it, read from the employee's stored column
// (docs/odata.md, "Column properties"). Decimals are written as the JSON number of the
// stored decimal text, digit for digit (no float rounding on the way); a stored value that
// does not fit its type (loaded before types were checked) reads as null for a decimal,
// date or boolean property, and as JSON text for a string property.
import { isCalendarDate, isDecimal, isPlainObject } from '../columns/types.js';
import type { ColumnProperty } from './model.js';

/** A decimal as JSON number text, exactly as stored; null when it is not one. */
function decimalJson(value: unknown): string {
  if (typeof value === 'string') return isDecimal(value) ? value : 'null';
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : 'null';
}

/** The amount of a currency object (`{ "USD": "120000.00" }`) as decimal JSON. */
function amountJson(value: unknown): string {
  if (!isPlainObject(value)) return 'null';
  const amounts = Object.values(value);
  return amounts.length === 1 ? decimalJson(amounts[0]) : 'null';
}

/** A decimal's JSON text as a JSON string, when asked (null stays null). */
const asString = (json: string, ieee754: boolean) =>
  ieee754 && json !== 'null' ? `"${json}"` : json;

/**
 * The JSON text of a column property of an employee whose `columns` are these; `ieee754`:
 * a decimal as a JSON string (IEEE754Compatible=true).
 */
export function columnValueJson(
  property: ColumnProperty,
  columns: Record<string, { value?: unknown } | undefined>,
  ieee754 = false,
): string {
  let value = columns[property.key]?.value;
  if (property.part !== null) value = isPlainObject(value) ? value[property.part] : undefined;
  if (value === null || value === undefined) return 'null';
  switch (property.reading) {
    case 'number':
      return asString(decimalJson(value), ieee754);
    case 'currency':
      return asString(amountJson(value), ieee754);
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : 'null';
    case 'json':
      return JSON.stringify(JSON.stringify(value));
    default:
      // text and mixed: a string as it is, anything else as its JSON text.
      return JSON.stringify(typeof value === 'string' ? value : JSON.stringify(value));
  }
}
