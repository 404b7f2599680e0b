// A column property's value as the feed serves it, read from the employee's stored column
// (docs/odata.md, "Column properties"). Decimals are written as the JSON number of the
// stored decimal text, digit for digit (no float rounding on the way); a stored value that
// does not fit its type (loaded before types were checked) reads as null for a decimal,
// date or boolean property, and as JSON text for a string property.
import { columnValueOf, isDecimalReading } from '../columns/properties.js';
import type { ColumnProperty } from './model.js';

/**
 * The JSON text of a column property of an employee whose `columns` are these
 * (columnValueOf); `ieee754`: a decimal as a JSON string (IEEE754Compatible=true).
 */
export function columnValueJson(
  property: ColumnProperty,
  columns: Record<string, { value?: unknown } | undefined>,
  ieee754 = false,
): string {
  const value = columnValueOf(property, columns);
  if (value === null) return 'null';
  if (isDecimalReading(property.reading)) return ieee754 ? `"${value}"` : String(value);
  return JSON.stringify(value);
}
