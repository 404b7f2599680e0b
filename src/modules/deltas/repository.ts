// The reads of a delta page (walk.ts): one statement each, so that the items, the
// removals and the organisation's counter come from one snapshot. Items and removals are
// two range scans in change order — of the (scope, change_seq, id) indexes of migration
// 0010 — each limited to one more than the page; the page is their merge. A delta over a
// few changes of a large cycle reads those changes, not the cycle.
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { MeritCycleRow } from '../../db/types.js';
import { isId } from '../../ids.js';
import type { ReadScope } from '../api-keys/scope.js';
import { withoutColumnsOf } from '../employees/hidden-columns.js';
import { toMeritCycle } from '../merit-cycles/repository.js';
import type { MeritCycle } from '../merit-cycles/schema.js';
import { byChangeOrder, type Change, type DeltaState, type DeltaWalk } from './walk.js';

/** The changes of one page (one more than it holds when more follow), and their state. */
export interface ChangesRead<Item> {
  state: DeltaState;
  changes: Change<Item>[];
}

/**
 * Where a scan starts: past the walk's position, and above `stamp` (the walk's `from` for
 * items, `removalsFrom` for removals). One condition, whichever is the tighter, so that
 * the database starts its range scan there: with both, SQLite starts at the looser one
 * and filters every row up to the position, page after page.
 */
function changedSince(stamp: number, walk: DeltaWalk): RawBuilder<unknown> {
  const after = walk.after;
  return after && after[0] > stamp
    ? sql`(change_seq, id) > (${after[0]}, ${after[1]})`
    : sql`change_seq > ${stamp}`;
}

/** The two scans, as one list of rows: live items (`body` or cycle columns) and removals. */
function changedRows(live: RawBuilder<unknown>, removed: RawBuilder<unknown> | undefined) {
  return removed
    ? sql`select * from (${live}) live union all select * from (${removed}) removed`
    : live;
}

interface StateRow {
  counter: number | string;
  purged: number | string;
  stamp: number | string | null;
  id: string | null;
}

const stateOf = (row: StateRow, createdStamp?: number | string): DeltaState => ({
  counter: Number(row.counter),
  purgedThrough: Number(row.purged),
  ...(createdStamp === undefined ? {} : { createdStamp: Number(createdStamp) }),
});

/** The merged page: rows of both scans in change order, one more than the page at most. */
function merged<Row extends StateRow, Item>(
  rows: Row[],
  limit: number,
  itemOf: (row: Row) => Item | undefined,
): Change<Item>[] {
  return rows
    .filter((row) => row.id !== null)
    .map((row) => ({ stamp: Number(row.stamp), id: row.id as string, item: itemOf(row) }))
    .sort(byChangeOrder)
    .slice(0, limit + 1);
}

type EmployeeChangeRow = StateRow & { created: number | string; body: string | null };

/**
 * The statement of a page of employee changes: the organisation's counter, the cycle's
 * creation stamp, and the changes; no row when the scope may not read the cycle.
 * Exported for the test of its plan (test/db/delta-plan.test.ts).
 */
export function employeeChangesQuery(scope: ReadScope, meritCycleId: string, walk: DeltaWalk) {
  const { organizationId, cycleIds } = scope;
  const inCycleScope =
    cycleIds === null
      ? sql``
      : cycleIds.length === 0
        ? sql` and 1 = 0`
        : sql` and c.id in (${sql.join(cycleIds)})`;
  const n = walk.limit + 1;
  const live = sql`select change_seq as stamp, id, body from merit_cycle_employees
     where merit_cycle_id = ${meritCycleId} and organization_id = ${organizationId}
       and ${changedSince(walk.from, walk)}
     order by change_seq, id limit ${n}`;
  const removed =
    walk.removalsFrom === undefined
      ? undefined
      : sql`select change_seq as stamp, id, null as body from removed_employees
     where merit_cycle_id = ${meritCycleId}
       and ${changedSince(walk.removalsFrom, walk)}
     order by change_seq, id limit ${n}`;
  return sql<EmployeeChangeRow>`
    select o.change_seq as counter, o.purged_change_seq as purged,
           c.created_change_seq as created, changed.stamp, changed.id, changed.body
      from organizations o
      join merit_cycles c on c.organization_id = o.id and c.id = ${meritCycleId}${inCycleScope}
      left join (${changedRows(live, removed)}) changed on 1 = 1
     where o.id = ${organizationId}`;
}

/**
 * A page of the employee changes of a merit cycle the scope may read; undefined when it
 * may not (another organisation's, outside a key's cycle scope, or none).
 */
export async function readEmployeeChanges(
  db: Db,
  scope: ReadScope,
  meritCycleId: string,
  walk: DeltaWalk,
): Promise<ChangesRead<string> | undefined> {
  if (!isId('mc', meritCycleId)) return undefined;
  const { rows } = await employeeChangesQuery(scope, meritCycleId, walk).execute(db);
  const first = rows[0];
  if (!first) return undefined;
  const hidden = scope.hiddenColumns;
  return {
    state: stateOf(first, first.created),
    changes: merged(rows, walk.limit, (row) =>
      row.body === null
        ? undefined
        : hidden.length === 0
          ? row.body
          : withoutColumnsOf(row.body, hidden),
    ),
  };
}

type CycleColumns = Pick<
  MeritCycleRow,
  'id' | 'name' | 'start_date' | 'end_date' | 'created_date' | 'status'
>;

/** A page of the merit cycle changes the scope may read. */
export async function readMeritCycleChanges(
  db: Db,
  scope: ReadScope,
  walk: DeltaWalk,
): Promise<ChangesRead<MeritCycle>> {
  const { organizationId, cycleIds } = scope;
  const inCycleScope =
    cycleIds === null
      ? sql``
      : cycleIds.length === 0
        ? sql` and 1 = 0`
        : sql` and id in (${sql.join(cycleIds)})`;
  const n = walk.limit + 1;
  // The scans carry stamps and ids only; the cycles' columns are joined to the live ones.
  const live = sql`select change_seq as stamp, id, 0 as removed from merit_cycles
     where organization_id = ${organizationId}${inCycleScope}
       and ${changedSince(walk.from, walk)}
     order by change_seq, id limit ${n}`;
  const removed =
    walk.removalsFrom === undefined
      ? undefined
      : sql`select change_seq as stamp, id, 1 as removed from removed_merit_cycles
     where organization_id = ${organizationId}${inCycleScope}
       and ${changedSince(walk.removalsFrom, walk)}
     order by change_seq, id limit ${n}`;
  const { rows } = await sql<StateRow & { removed: number | null } & CycleColumns>`
    select o.change_seq as counter, o.purged_change_seq as purged,
           changed.stamp, changed.id, changed.removed,
           c.name, c.status, c.start_date, c.end_date, c.created_date
      from organizations o
      left join (${changedRows(live, removed)}) changed on 1 = 1
      left join merit_cycles c on c.id = changed.id and changed.removed = 0
     where o.id = ${organizationId}`.execute(db);
  const first = rows[0];
  // The key's organisation exists: the key was found by it.
  if (!first) throw new Error(`organisation ${organizationId} not found`);
  return {
    state: stateOf(first),
    changes: merged(rows, walk.limit, (row) =>
      Number(row.removed) === 1 ? undefined : toMeritCycle(row),
    ),
  };
}
