// Hidden columns (docs/api-keys.md, "Least privilege"): a key may be made without some column keys
// (`salary`, `bonus`, …), which are then absent from every employee it reads.
//
// The stored texts are what JSON.stringify wrote at import, so parsing one and writing it
// again gives the same text back, byte for byte, except for the columns taken out: this is
// right for any column key (quotes, dots, `__proto__`) and any value, which string surgery
// on the text would not be. Only keys that hide columns pay for it (docs/api-keys.md gives
// the cost); SQL's JSON functions would not do better: PostgreSQL's jsonb `-` reorders an
// object's keys and respaces it, so a page would no longer read like a full key's.
import type { Employee } from './schema.js';

/**
 * The employees' JSON texts, separated by `separator` in `texts`, as one comma-separated
 * list in which no employee has any of the `hidden` column keys.
 */
export function withoutColumns(
  texts: Buffer,
  separator: number,
  hidden: readonly string[],
): Buffer {
  if (texts.length === 0) return texts;
  const kept = texts
    .toString('utf8')
    .split(String.fromCharCode(separator))
    .map((text) => withoutColumnsOf(text, hidden));
  return Buffer.from(kept.join(','));
}

/** One employee's JSON text without any of the `hidden` column keys. */
export function withoutColumnsOf(text: string, hidden: readonly string[]): string {
  return JSON.stringify(removeColumns(JSON.parse(text) as Employee, hidden));
}

/** Takes the `hidden` column keys out of an employee; returns it. */
export function removeColumns(employee: Employee, hidden: readonly string[]): Employee {
  for (const key of hidden) {
    if (Object.hasOwn(employee.columns, key)) delete employee.columns[key];
  }
  return employee;
}
