// The column schema of merit cycles as stored (migration 0013): one row a cycle, written by
// the import (import/merge.ts), read by the schema endpoint and the CSV import.
import type { Kysely } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/types.js';
import { isId } from '../ids.js';
import { readableCycles } from '../tenancy/cycles.js';
import type { ReadScope } from '../tenancy/scope.js';
import { type HiddenColumns, hiddenIn, visibleColumns } from './hidden.js';
import type { ColumnDescription } from './schema.js';

const parse = (text: string | null | undefined): ColumnDescription[] =>
  text ? (JSON.parse(text) as ColumnDescription[]) : [];

/**
 * The columns of the cycle with this id that the scope may read, in one statement (the
 * cycle's check and its schema's row); undefined when the scope may not read it, as for a
 * cycle that does not exist. The scope's hidden columns (by key and by type) are left out.
 */
export async function findColumnSchema(
  db: Db,
  scope: ReadScope,
  meritCycleId: string,
): Promise<ColumnDescription[] | undefined> {
  if (!isId('mc', meritCycleId)) return undefined;
  const row = await db
    .selectFrom('merit_cycles')
    .leftJoin('merit_cycle_columns', 'merit_cycle_columns.merit_cycle_id', 'merit_cycles.id')
    .select('merit_cycle_columns.columns')
    .where(readableCycles(scope))
    .where('merit_cycles.id', '=', meritCycleId)
    .executeTakeFirst();
  if (!row) return undefined;
  const schema = parse(row.columns);
  return visibleColumns(schema, hiddenIn(scope, schema));
}

/**
 * What the scope does not read of the employees of a cycle it may read: its hidden keys,
 * and for a key that hides types, the parts of those types by the cycle's schema (one small
 * read; none for a key that hides no type).
 */
export async function hiddenColumnsFor(
  db: Db,
  scope: ReadScope,
  meritCycleId: string,
): Promise<HiddenColumns> {
  return hiddenIn(
    scope,
    scope.hiddenColumnTypes.length === 0 ? [] : await readColumnSchema(db, meritCycleId),
  );
}

/** The stored schema of a cycle (every column: the import's own read). */
export async function readColumnSchema(
  trx: Kysely<Database>,
  meritCycleId: string,
): Promise<ColumnDescription[]> {
  const row = await trx
    .selectFrom('merit_cycle_columns')
    .select('columns')
    .where('merit_cycle_id', '=', meritCycleId)
    .executeTakeFirst();
  return parse(row?.columns);
}

/** Writes a cycle's schema, when it differs from what is stored. */
export async function saveColumnSchema(
  trx: Kysely<Database>,
  organizationId: string,
  meritCycleId: string,
  columns: readonly ColumnDescription[],
): Promise<void> {
  const text = JSON.stringify(columns);
  const stored = await trx
    .selectFrom('merit_cycle_columns')
    .select('columns')
    .where('merit_cycle_id', '=', meritCycleId)
    .executeTakeFirst();
  if (stored?.columns === text) return;
  await trx
    .insertInto('merit_cycle_columns')
    .values({ merit_cycle_id: meritCycleId, organization_id: organizationId, columns: text })
    .onConflict((conflict) => conflict.column('merit_cycle_id').doUpdateSet({ columns: text }))
    .execute();
}

/** One readable cycle's column schema, with the cycle's currency (the OData model's input). */
export interface CycleColumns {
  meritCycleId: string;
  currency: string;
  columns: ColumnDescription[];
}

/**
 * The column schemas of every cycle the scope may read, in one statement, without the
 * scope's hidden columns; ordered by cycle id. A column (or composite part) of a hidden
 * type in any of them is left out of all of them: the feed's property for a key is one
 * across cycles, and its rows and filters read each cycle's stored value under it, so a
 * key whose type differs between cycles (`department`: text here, a number there) must not
 * exist for the key at all.
 */
export async function readableColumnSchemas(db: Db, scope: ReadScope): Promise<CycleColumns[]> {
  const rows = await db
    .selectFrom('merit_cycles')
    .leftJoin('merit_cycle_columns', 'merit_cycle_columns.merit_cycle_id', 'merit_cycles.id')
    .select(['merit_cycles.id', 'merit_cycles.currency', 'merit_cycle_columns.columns'])
    .where(readableCycles(scope))
    .orderBy('merit_cycles.id')
    .execute();
  const schemas = rows.map((row) => parse(row.columns));
  const hiddenEverywhere = hiddenAcross(scope, schemas);
  return rows.map((row, index) => ({
    meritCycleId: row.id,
    currency: row.currency,
    columns: visibleColumns(schemas[index] ?? [], hiddenEverywhere),
  }));
}

/** The union of what the scope hides in each of `schemas`, by key: hidden in one, in all. */
function hiddenAcross(scope: ReadScope, schemas: readonly ColumnDescription[][]): HiddenColumns {
  const keys = new Set(scope.hiddenColumns);
  const parts = new Map<string, Set<string>>();
  for (const schema of schemas) {
    for (const column of schema) {
      if (scope.hiddenColumnTypes.includes(column.type)) keys.add(column.key);
    }
    for (const [column, hidden] of hiddenIn(scope, schema).parts) {
      const known = parts.get(column) ?? new Set();
      for (const part of hidden) known.add(part);
      parts.set(column, known);
    }
  }
  return {
    keys: [...keys],
    types: scope.hiddenColumnTypes,
    parts: [...parts].map(([column, hidden]) => [column, [...hidden]]),
  };
}
