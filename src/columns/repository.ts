// The column schema of merit cycles as stored (migration 0013): one row a cycle, written by
// the import (import/merge.ts), read by the schema endpoint and the CSV import.
import type { Kysely } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/types.js';
import { isId } from '../ids.js';
import { readableCycles } from '../tenancy/cycles.js';
import type { ReadScope } from '../tenancy/scope.js';
import type { ColumnDescription } from './schema.js';

const parse = (text: string | null | undefined): ColumnDescription[] =>
  text ? (JSON.parse(text) as ColumnDescription[]) : [];

/**
 * The columns of the cycle with this id that the scope may read, in one statement (the
 * cycle's check and its schema's row); undefined when the scope may not read it, as for a
 * cycle that does not exist. The scope's hidden columns are left out.
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
  const hidden = new Set(scope.hiddenColumns);
  return parse(row.columns).filter((column) => !hidden.has(column.key));
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
 * scope's hidden columns; ordered by cycle id.
 */
export async function readableColumnSchemas(db: Db, scope: ReadScope): Promise<CycleColumns[]> {
  const rows = await db
    .selectFrom('merit_cycles')
    .leftJoin('merit_cycle_columns', 'merit_cycle_columns.merit_cycle_id', 'merit_cycles.id')
    .select(['merit_cycles.id', 'merit_cycles.currency', 'merit_cycle_columns.columns'])
    .where(readableCycles(scope))
    .orderBy('merit_cycles.id')
    .execute();
  const hidden = new Set(scope.hiddenColumns);
  return rows.map((row) => ({
    meritCycleId: row.id,
    currency: row.currency,
    columns: parse(row.columns).filter((column) => !hidden.has(column.key)),
  }));
}
