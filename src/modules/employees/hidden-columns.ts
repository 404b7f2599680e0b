// Hidden columns (docs/api-keys.md, "Least privilege"): a key may be made without some column keys
// (`salary`, `bonus`, …), which are then absent from every employee it reads.
//
// The stored texts are what JSON.stringify wrote at import, so parsing one and writing it
// again gives the same text back, byte for byte, except for the columns taken out: this is
// right for any column key (quotes, dots, `__proto__`) and any value, which string surgery
// on the text would not be. Only keys that hide columns pay for it (docs/api-keys.md gives
// the cost); SQL's JSON functions would not do better: PostgreSQL's jsonb `-` reorders an
// object's keys and respaces it, so a page would no longer read like a full key's.
import type { HiddenColumns } from '../../columns/hidden.js';
import type { Employee } from './schema.js';

/**
 * The employees' JSON texts, separated by `separator` in `texts`, as one comma-separated
 * list in which no employee has any of the `hidden` columns.
 */
export function withoutColumns(texts: Buffer, separator: number, hidden: HiddenColumns): Buffer {
  if (texts.length === 0) return texts;
  const kept = texts
    .toString('utf8')
    .split(String.fromCharCode(separator))
    .map((text) => withoutColumnsOf(text, hidden));
  return Buffer.from(kept.join(','));
}

/** One employee's JSON text without any of the `hidden` columns. */
export function withoutColumnsOf(text: string, hidden: HiddenColumns): string {
  return JSON.stringify(removeColumns(JSON.parse(text) as Employee, hidden));
}

/**
 * Takes the `hidden` columns out of an employee: the keys, the columns of the hidden types,
 * and the hidden parts of composite values (a part that is a currency object is a currency
 * part whatever the schema read with the page said); returns the employee.
 */
export function removeColumns(employee: Employee, hidden: HiddenColumns): Employee {
  const { columns } = employee;
  for (const key of hidden.keys) {
    if (Object.hasOwn(columns, key)) delete columns[key];
  }
  if (hidden.types.length === 0) return employee;
  for (const key of Object.keys(columns)) {
    const column = columns[key] as { type?: unknown };
    if (hidden.types.includes(String(column.type))) delete columns[key];
  }
  const currencyHidden = hidden.types.includes('currency');
  const parts = new Map(hidden.parts);
  for (const key of Object.keys(columns)) {
    const column = columns[key] as { type?: unknown; value?: unknown };
    const value = column.value;
    if (column.type !== 'composite' || typeof value !== 'object' || value === null) continue;
    const record = value as Record<string, unknown>;
    for (const part of parts.get(key) ?? []) {
      if (Object.hasOwn(record, part)) delete record[part];
    }
    if (!currencyHidden) continue;
    for (const part of Object.keys(record)) {
      if (typeof record[part] === 'object' && record[part] !== null) delete record[part];
    }
  }
  return employee;
}
