// What a key does not read of a cycle's columns (docs/api-keys.md, "Least privilege"): the
// column keys it hides, and every column of the types it hides — composite parts of those
// types included, a part's type being the one the cycle's column schema gives it. The key
// stores the types, not the columns they stand for, so a column of a hidden type that a
// later import brings is hidden too.
import type { ColumnDescription } from './schema.js';

/** What a key hides: column keys, and column types (sorted, often empty). */
export interface ColumnConcealment {
  readonly hiddenColumns: readonly string[];
  readonly hiddenColumnTypes: readonly string[];
}

/**
 * What a key does not read of one cycle's employees. Plain data: it crosses to the bulk
 * download's CSV threads.
 */
export interface HiddenColumns {
  /** Column keys taken out of every employee. */
  readonly keys: readonly string[];
  /** Columns of these types are taken out (each employee's column names its type). */
  readonly types: readonly string[];
  /** A composite column's key and the parts taken out of its value (their type is hidden). */
  readonly parts: readonly (readonly [column: string, parts: readonly string[]])[];
}

export const hidesNothing = (hidden: HiddenColumns): boolean =>
  hidden.keys.length === 0 && hidden.types.length === 0;

/** A key's hidden columns in a cycle whose column schema is `schema`. */
export function hiddenIn(
  concealment: ColumnConcealment,
  schema: readonly ColumnDescription[],
): HiddenColumns {
  const keys = concealment.hiddenColumns;
  const types = concealment.hiddenColumnTypes;
  if (types.length === 0) return { keys, types, parts: [] };
  const hiddenKeys = new Set(keys);
  const parts: [string, string[]][] = [];
  for (const column of schema) {
    if (column.parts === null || hiddenKeys.has(column.key) || types.includes(column.type)) {
      continue;
    }
    const hiddenParts = column.parts.filter((part) => types.includes(part.type));
    if (hiddenParts.length > 0) parts.push([column.key, hiddenParts.map((part) => part.key)]);
  }
  return { keys, types, parts };
}

/** The columns of `schema` a key reads: without those it hides, and without hidden parts. */
export function visibleColumns(
  schema: readonly ColumnDescription[],
  hidden: HiddenColumns,
): ColumnDescription[] {
  if (hidesNothing(hidden)) return [...schema];
  const keys = new Set(hidden.keys);
  const parts = new Map(hidden.parts);
  return schema
    .filter((column) => !keys.has(column.key) && !hidden.types.includes(column.type))
    .map((column) => {
      const taken = parts.get(column.key);
      return taken === undefined || column.parts === null
        ? column
        : { ...column, parts: column.parts.filter((part) => !taken.includes(part.key)) };
    });
}
