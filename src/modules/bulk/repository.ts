// What a bulk download reads besides the employees' texts (those are the list's reads,
// src/modules/employees/repository.ts) and its CSV header (the cycle's column schema,
// src/columns/repository.ts): the version of a cycle's employees its ETag is made from.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { isId } from '../../ids.js';
import { inCycleScope } from '../../tenancy/cycles.js';
import type { ReadScope } from '../../tenancy/scope.js';

/**
 * The version of what the cycle's employees are, or undefined when the scope may not read
 * the cycle. Every change of an employee gives its row a stamp above any before it, and a
 * removal leaves a tombstone with one (src/changes/change.ts); so the newest of those
 * stamps changes whenever the employees do. A tombstone's purge can take the newest
 * stamp away: the organisation's purge mark, which only grows, is part of the version
 * so that the version never goes back to one it had. Three index lookups, no rows read.
 */
/**
 * The newest stamps of what the scope reads of cycle `c`: its employees and removals, or a
 * sliced key's members and departures (which a change of the slice stamps as well).
 */
function versionOf(scope: ReadScope) {
  const slice = scope.rowSlice;
  if (slice === null) {
    return sql`(select max(change_seq) from merit_cycle_employees where merit_cycle_id = c.id) as employees,
      (select max(change_seq) from removed_employees where merit_cycle_id = c.id) as removals,`;
  }
  return sql`(select max(change_seq) from row_slice_members
        where slice_id = ${slice.id} and merit_cycle_id = c.id) as employees,
      (select max(change_seq) from row_slice_departures
        where slice_id = ${slice.id} and merit_cycle_id = c.id) as removals,`;
}

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
    select ${versionOf(scope)}
      o.purged_change_seq as purged
    from merit_cycles c join organizations o on o.id = c.organization_id
    where c.organization_id = ${scope.organizationId} and c.id = ${meritCycleId}${inCycleScope(scope, sql`c.id`)}`.execute(
    db,
  );
  const row = rows[0];
  if (!row) return undefined;
  return [row.employees ?? -1, row.removals ?? -1, row.purged].map(Number).join('.');
}
