// A merit cycle's column schema (docs/import-format.md, "Column types"): each column key
// with its one display name and type, and for a composite column the union of the parts
// seen with their types. The import notes the columns of every employee as it takes them
// (noteColumns: a key with two names or types in one cycle is refused there), and keeps
// the result with the cycle (repository.ts), so that reading it never scans employees.
import { byCodePoint } from './order.js';
import { type PartType, partTypeOf, widerPartType } from './types.js';

export interface ColumnPart {
  key: string;
  type: PartType;
}

/** One column as the schema endpoint serves it. */
export interface ColumnDescription {
  key: string;
  name: string;
  type: string;
  /** For a composite column the parts seen, by key; null for every other type. */
  parts: ColumnPart[] | null;
}

/** A column as an employee carries it (already checked by the import's schema). */
export interface EmployeeColumn {
  name: string;
  type: string;
  value: unknown;
}

/** A column of a cycle as the import has seen it so far: plain data (crosses threads). */
export interface SeenColumn {
  name: string;
  type: string;
  /** The employee (its index in the cycle) that first had the column. */
  employee: number;
  /** Composite: each part seen, its type and the employee that first had it. */
  parts: Map<string, { type: PartType; employee: number }> | null;
}

/** A disagreement of one employee's column with the cycle's: below the employee. */
export interface ColumnConflict {
  path: (string | number)[];
  message: string;
  /** The earlier employee (index in the cycle) the column is otherwise on. */
  other: number;
}

const ONE_PER_CYCLE = 'a column has one name and one type within a merit cycle';

/**
 * Notes the columns of employee `employee` among those `seen` in its cycle; returns where
 * they disagree with an earlier employee's (a second name or type for a key, a part that is
 * a currency object for one employee and a string for another). Cheap: a lookup a column.
 */
export function noteColumns(
  seen: Map<string, SeenColumn>,
  columns: Record<string, EmployeeColumn>,
  employee: number,
): ColumnConflict[] {
  const conflicts: ColumnConflict[] = [];
  for (const key of Object.keys(columns)) {
    const column = columns[key] as EmployeeColumn;
    const known = seen.get(key);
    if (!known) {
      const parts = column.type === 'composite' ? new Map() : null;
      seen.set(key, { name: column.name, type: column.type, employee, parts });
      notePartsOf(seen.get(key) as SeenColumn, column, employee, key, conflicts);
      continue;
    }
    if (known.type !== column.type) {
      conflicts.push({
        path: ['columns', key, 'type'],
        message: `is ${JSON.stringify(column.type)}, but the column is ${JSON.stringify(known.type)} at {other}: ${ONE_PER_CYCLE}`,
        other: known.employee,
      });
    } else if (known.name !== column.name) {
      conflicts.push({
        path: ['columns', key, 'name'],
        message: `is ${JSON.stringify(column.name)}, but the column is named ${JSON.stringify(known.name)} at {other}: ${ONE_PER_CYCLE}`,
        other: known.employee,
      });
    } else notePartsOf(known, column, employee, key, conflicts);
  }
  return conflicts;
}

function notePartsOf(
  known: SeenColumn,
  column: EmployeeColumn,
  employee: number,
  key: string,
  conflicts: ColumnConflict[],
): void {
  const { parts } = known;
  const value = column.value;
  if (!parts || typeof value !== 'object' || value === null) return;
  for (const [part, given] of Object.entries(value)) {
    const type = partTypeOf(given);
    const earlier = parts.get(part);
    if (!earlier) parts.set(part, { type, employee });
    else if (earlier.type !== type) {
      const wider = widerPartType(earlier.type, type);
      if (wider) earlier.type = wider;
      else {
        conflicts.push({
          path: ['columns', key, 'value', part],
          message: `is ${type === 'currency' ? 'a currency object' : 'a string'}, but this part is ${earlier.type === 'currency' ? 'a currency object' : 'a string'} at {other}: a part has one type within a merit cycle`,
          other: earlier.employee,
        });
      }
    }
  }
}

const byKey = (a: { key: string }, b: { key: string }) => byCodePoint(a.key, b.key);

/** The columns seen, as the schema describes them: ordered by key, parts too. */
export function describeColumns(seen: ReadonlyMap<string, SeenColumn>): ColumnDescription[] {
  return [...seen.entries()]
    .map(([key, column]) => ({
      key,
      name: column.name,
      type: column.type,
      parts: column.parts
        ? [...column.parts.entries()].map(([part, { type }]) => ({ key: part, type })).sort(byKey)
        : null,
    }))
    .sort(byKey);
}

/** Where a file's column disagrees with the stored schema of its cycle. */
export interface SchemaConflict {
  key: string;
  /** `type` or `name`; a part's key for a part of two kinds. */
  field: 'type' | 'name' | { part: string };
  stored: string;
}

/**
 * The schema of a cycle whose stored employees are partly kept: the stored columns and the
 * file's together, parts united (a part of two string kinds becomes text). A key the file
 * gives another name or type than the stored schema is a conflict.
 */
export function mergeColumnSchemas(
  stored: readonly ColumnDescription[],
  given: readonly ColumnDescription[],
): { columns: ColumnDescription[]; conflicts: SchemaConflict[] } {
  const columns = new Map(stored.map((column) => [column.key, column]));
  const conflicts: SchemaConflict[] = [];
  for (const column of given) {
    const known = columns.get(column.key);
    if (!known) {
      columns.set(column.key, column);
      continue;
    }
    if (known.type !== column.type) {
      conflicts.push({ key: column.key, field: 'type', stored: known.type });
      continue;
    }
    if (known.name !== column.name) {
      conflicts.push({ key: column.key, field: 'name', stored: known.name });
      continue;
    }
    if (!known.parts || !column.parts) continue;
    const parts = new Map(known.parts.map((part) => [part.key, part.type]));
    for (const part of column.parts) {
      const earlier = parts.get(part.key);
      const type = earlier === undefined ? part.type : widerPartType(earlier, part.type);
      if (type === undefined) {
        conflicts.push({ key: column.key, field: { part: part.key }, stored: earlier as string });
      } else parts.set(part.key, type);
    }
    const united = [...parts.entries()].map(([key, type]) => ({ key, type })).sort(byKey);
    columns.set(column.key, { ...known, parts: united });
  }
  return { columns: [...columns.values()].sort(byKey), conflicts };
}
