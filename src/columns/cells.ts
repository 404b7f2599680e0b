// A column value as one CSV cell, and back (docs/export.md, docs/import-format.md "CSV").
// The cell holds the value as a person edits it in a spreadsheet; the type, the display name
// and the currency are not in the cell but in the merit cycle's column schema, which the
// export writes its header from and the CSV import reads its cells by:
//   text, number, date   the string itself             Engineering · 0.97 · 2025-04-01
//   boolean              true or false
//   currency             the amount, in the cycle's currency     120000.00
//   composite            one cell a part (columns.KEY.PART); a currency part as its amount
//   any other type       the value as JSON                        {"a":1} · "a string"
// null is an empty cell; the empty string is a quoted empty cell (""), as PostgreSQL's CSV
// writes them, so that both survive the round trip.
import { isPlainObject, type PartType } from './types.js';

/** The amount of a currency object `{ "USD": "1.00" }`; undefined for any other value. */
function amountOf(value: unknown): string | undefined {
  if (!isPlainObject(value)) return undefined;
  // Its keys alone: the CSV writers ask this of every currency cell (no entry arrays).
  const keys = Object.keys(value);
  const amount = keys.length === 1 ? value[keys[0] as string] : undefined;
  return typeof amount === 'string' ? amount : undefined;
}

/**
 * A value of a column of `type` as the cell's text; null for an empty cell. A stored value
 * that breaks its type's rules (loaded before they were checked) is written as JSON.
 */
export function cellOf(type: string, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (type === 'text' || type === 'number' || type === 'date') {
    if (typeof value === 'string') return value;
  } else if (type === 'boolean') {
    if (typeof value === 'boolean') return String(value);
  } else if (type === 'currency') {
    const amount = amountOf(value);
    if (amount !== undefined) return amount;
  }
  return JSON.stringify(value);
}

/** A part of a composite value as the cell's text: a string itself, a currency's amount. */
export function partCellOf(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  return amountOf(value) ?? JSON.stringify(value);
}

/**
 * A cell's text as the value of a column of `type` in a cycle whose currency is
 * `currency`. Text that is no value of the type is passed on as it is, for the import's
 * checks to refuse with the row and column (`yes` for a boolean).
 */
export function valueOfCell(type: string, cell: string, currency: string): unknown {
  switch (type) {
    case 'text':
    case 'number':
    case 'date':
      return cell;
    case 'boolean':
      return cell === 'true' ? true : cell === 'false' ? false : cell;
    case 'currency':
      return { [currency]: cell };
    default:
      // A composite given in one cell, or an open type: JSON; text that is not JSON is
      // itself (a value typed by hand).
      try {
        return JSON.parse(cell) as unknown;
      } catch {
        return cell;
      }
  }
}

/** A part's cell as the part: a currency part's amount as a currency object. */
export function partOfCell(type: PartType | undefined, cell: string, currency: string): unknown {
  return type === 'currency' ? { [currency]: cell } : cell;
}
