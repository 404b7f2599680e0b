// What a bulk download reads besides the employees' texts (those are the list's reads,
// src/modules/employees/repository.ts): the version of a cycle's employees its ETag is
// made from, and the column names of its CSV header. Both run in the download's snapshot.
import { sql } from 'kysely';
import type { Db, Dialect } from '../../db/connect.js';
import { isId } from '../../ids.js';
import type { ReadScope } from '../api-keys/scope.js';
import { inCycleScope } from '../merit-cycles/repository.js';

/**
 * The version of what the cycle's employees are, or undefined when the scope may not read
 * the cycle. Every change of an employee gives its row a stamp above any before it, and a
 * removal leaves a tombstone with one (src/changes/change.ts); so the newest of those
 * stamps changes whenever the employees do. A tombstone's purge can take the newest
 * stamp away: the organisation's purge mark, which only grows, is part of the version
 * so that the version never goes back to one it had. Three index lookups, no rows read.
 */
export async function employeesVersion(
  db: Db,
  scope: ReadScope,
  meritCycleId: string,
): Promise<string | undefined> {
  if (!isId('mc', meritCycleId)) return undefined;
  const { rows } = await sql<{
    employees: number | string | null;
    removals: number | string | null;
    purged: number | string;
  }>`
    select
      (select max(change_seq) from merit_cycle_employees where merit_cycle_id = c.id) as employees,
      (select max(change_seq) from removed_employees where merit_cycle_id = c.id) as removals,
      o.purged_change_seq as purged
    from merit_cycles c join organizations o on o.id = c.organization_id
    where c.organization_id = ${scope.organizationId} and c.id = ${meritCycleId}${inCycleScope(scope, sql`c.id`)}`.execute(
    db,
  );
  const row = rows[0];
  if (!row) return undefined;
  return [row.employees ?? -1, row.removals ?? -1, row.purged].map(Number).join('.');
}

/**
 * The flattened column names (`columns.KEY`, `columns.KEY.PART`: src/export/csv.ts) that
 * the cycle's employees have, in no order, without the scope's hidden columns: every
 * column key of the stored employees, and every part of a `composite` column whose value
 * is an object, read from the stored texts with the database's JSON functions. It reads
 * every employee of the cycle once (about a second for a million).
 */
// `\u0000` and `\uD800`–`\uDFFF` → `u0020` (an escaped backslash before it stays one).
const PLAIN_ESCAPES = sql`regexp_replace(e.body, '\\\\u(0000|d[89a-f][0-9a-f]{2})', 'u0020', 'gi')`;

export async function cycleColumnNames(
  db: Db,
  dialect: Dialect,
  scope: ReadScope,
  meritCycleId: string,
): Promise<string[]> {
  const where = sql`e.organization_id = ${scope.organizationId} and e.merit_cycle_id = ${meritCycleId}`;
  // One row per column key and part; `part` is null for a column that is not split, and
  // for a composite column without parts, which (as flattenColumns) gives no column.
  // PostgreSQL's JSON functions refuse the escapes of \u0000 and of lone surrogates, which
  // a text may hold; they are made plain text first (only keys and types are read here).
  const query =
    dialect === 'postgres'
      ? sql<{ key: string; part: string | null; split: boolean | number }>`
          select distinct c.key, p.part,
                 (c.value ->> 'type' = 'composite' and json_typeof(c.value -> 'value') = 'object') as split
          from merit_cycle_employees e
          cross join lateral json_each(${PLAIN_ESCAPES}::json -> 'columns') c
          left join lateral json_object_keys(
            case when c.value ->> 'type' = 'composite' and json_typeof(c.value -> 'value') = 'object'
                 then c.value -> 'value' end) p(part) on true
          where ${where}`
      : sql<{ key: string; part: string | null; split: boolean | number }>`
          select distinct c.key as key, p.key as part,
                 (json_extract(c.value, '$.type') = 'composite' and json_type(c.value, '$.value') = 'object') as split
          from merit_cycle_employees e
          join json_each(e.body, '$.columns') c
          left join json_each(
            case when json_extract(c.value, '$.type') = 'composite' and json_type(c.value, '$.value') = 'object'
                 then json_extract(c.value, '$.value') end) p
          where ${where}`;
  const { rows } = await query.execute(db);
  const hidden = new Set(scope.hiddenColumns);
  const names = new Set<string>();
  for (const { key, part, split } of rows) {
    if (hidden.has(key)) continue;
    if (!split) names.add(`columns.${key}`);
    else if (part !== null) names.add(`columns.${key}.${part}`);
  }
  return [...names];
}
