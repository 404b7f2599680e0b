// The reads of a delta page (walk.ts): one statement each, so that the organisation's
// counter, the items and the removals come from one snapshot. The statement is a compound
// of three parts, read in turn: a header row (the counter, the newest purged stamp, and
// for employees the creation stamp of their cycle, which the key must be able to read),
// then two range scans in change order — the live items and the tombstones, over the
// (scope, change_seq, id) indexes of migration 0010 — each limited to one more than the
// page; the page is their merge. A delta over a few changes of a large cycle reads those
// changes, not the cycle.
import { type RawBuilder, sql } from 'kysely';
import { type HiddenColumns, hidesNothing } from '../../columns/hidden.js';
import { hiddenColumnsFor } from '../../columns/repository.js';
import type { Db, Dialect } from '../../db/connect.js';
import type { MeritCycleRow } from '../../db/types.js';
import { isId } from '../../ids.js';
import { inCycleScope } from '../../tenancy/cycles.js';
import { employeeChangeRows } from '../../tenancy/rows.js';
import type { ReadScope } from '../../tenancy/scope.js';
import { withoutColumnsOf } from '../employees/hidden-columns.js';
import { toMeritCycle } from '../merit-cycles/repository.js';
import type { MeritCycle } from '../merit-cycles/schema.js';
import { byChangeOrder, type Change, type DeltaState, type DeltaWalk } from './walk.js';

/** The changes of one page (one more than it holds when more follow), and their state. */
export interface ChangesRead<Item> {
  state: DeltaState;
  changes: Change<Item>[];
}

/** What a row of the compound is: its first column. */
const HEADER = 0;
const LIVE = 1;
const REMOVED = 2;

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

interface CompoundRow {
  kind: number | string;
  /** The header's: the organisation's counter. */
  stamp: number | string;
  id: string | null;
}

/**
 * The header and the changes, in change order, one more than the page at most; no header
 * when the scope may not read what was asked (its rows, if any, are then not looked at).
 */
function split<Row extends CompoundRow, Item>(
  rows: Row[],
  limit: number,
  itemOf: (row: Row) => Item | undefined,
): { header: Row | undefined; changes: Change<Item>[] } {
  const header = rows.find((row) => Number(row.kind) === HEADER);
  const changes = rows
    .filter((row) => Number(row.kind) !== HEADER)
    .map((row) => ({ stamp: Number(row.stamp), id: row.id as string, item: itemOf(row) }))
    .sort(byChangeOrder)
    .slice(0, limit + 1);
  return { header, changes };
}

/** One range scan of the compound: a table's rows in change order, above a stamp. */
interface Scan {
  /** A table's name, or a subquery with the table's columns (tenancy/rows.ts). */
  table: string | RawBuilder<unknown>;
  /** Which of the table's rows (besides the change order). */
  where: RawBuilder<unknown>;
  /** What the scan reads besides stamp and id, as `, column, …`; nothing for a tombstone. */
  columns: RawBuilder<unknown>;
  /**
   * The compound's row after kind, stamp and id: those columns, then nulls to the header's
   * width. The nulls stand outside the subquery: there they take their type from the other
   * parts (PostgreSQL types a null inside a subquery as text).
   */
  row: RawBuilder<unknown>;
}

/**
 * The statement of a delta page: the header, then the live items and, when the walk reads
 * removals, the tombstones, each scan limited to one more than the page.
 */
function changesQuery<Row extends CompoundRow>(
  header: RawBuilder<unknown>,
  walk: DeltaWalk,
  live: Scan,
  removed: Scan,
): RawBuilder<Row> {
  const n = walk.limit + 1;
  const scan = (kind: number, name: string, stamp: number, part: Scan) =>
    sql`select ${sql.lit(kind)}, stamp, id, ${part.row} from (
      select change_seq as stamp, id${part.columns} from ${typeof part.table === 'string' ? sql.table(part.table) : sql`${part.table} t`}
       where ${part.where} and ${changedSince(stamp, walk)}
       order by change_seq, id limit ${n}) ${sql.id(name)}`;
  const removals =
    walk.removalsFrom === undefined
      ? sql``
      : sql` union all ${scan(REMOVED, 'removed', walk.removalsFrom, removed)}`;
  return sql<Row>`${header} union all ${scan(LIVE, 'live', walk.from, live)}${removals}`;
}

type EmployeeChangeRow = CompoundRow & {
  body: Buffer | string | null;
  purged: number | string | null;
  created: number | string | null;
};

/**
 * The statement of a page of employee changes (header: counter, purged stamp, the cycle's
 * creation stamp; only when the scope may read the cycle). Exported for the test of its
 * plan (test/db/delta-plan.test.ts).
 */
export function employeeChangesQuery(
  dialect: Dialect,
  scope: ReadScope,
  meritCycleId: string,
  walk: DeltaWalk,
) {
  const { organizationId } = scope;
  // SQLite hands a BLOB over as bytes: the page goes from the database to the socket
  // without becoming JavaScript strings and back (as the list's page does).
  const body = dialect === 'sqlite' ? sql`cast(body as blob)` : sql`body`;
  // A sliced key's changes are its slice's (tenancy/rows.ts).
  const sliced = employeeChangeRows(
    scope,
    meritCycleId,
    dialect === 'sqlite' ? sql`cast(body as blob)` : sql`body`,
  );
  return changesQuery<EmployeeChangeRow>(
    sql`select ${sql.lit(HEADER)} as kind, o.change_seq as stamp, null as id, null as body,
           o.purged_change_seq as purged, c.created_change_seq as created
      from organizations o
      join merit_cycles c on c.organization_id = o.id and c.id = ${meritCycleId}${inCycleScope(scope, sql`c.id`)}
     where o.id = ${organizationId}`,
    walk,
    sliced
      ? { table: sliced.live, where: sql`1 = 1`, columns: sql`, body`, row: sql`body, null, null` }
      : {
          table: 'merit_cycle_employees',
          where: sql`merit_cycle_id = ${meritCycleId} and organization_id = ${organizationId}`,
          columns: sql`, ${body} as body`,
          row: sql`body, null, null`,
        },
    {
      table: sliced ? sliced.removed : 'removed_employees',
      where: sliced ? sql`1 = 1` : sql`merit_cycle_id = ${meritCycleId}`,
      columns: sql``,
      row: sql`null, null, null`,
    },
  );
}

/** An employee's stored JSON as UTF-8 bytes, without the columns the key hides. */
function employeeBytes(body: Buffer | string, hidden: HiddenColumns): Buffer {
  if (!hidesNothing(hidden)) return Buffer.from(withoutColumnsOf(body.toString(), hidden));
  return typeof body === 'string' ? Buffer.from(body) : body;
}

/**
 * A page of the employee changes of a merit cycle the scope may read, each employee as
 * the UTF-8 bytes of its JSON; undefined when the scope may not read the cycle (another
 * organisation's, outside a key's cycle scope, or none).
 */
export async function readEmployeeChanges(
  db: Db,
  dialect: Dialect,
  scope: ReadScope,
  meritCycleId: string,
  walk: DeltaWalk,
): Promise<ChangesRead<Buffer> | undefined> {
  if (!isId('mc', meritCycleId)) return undefined;
  const { rows } = await employeeChangesQuery(dialect, scope, meritCycleId, walk).execute(db);
  const hidden = await hiddenColumnsFor(db, scope, meritCycleId);
  const { header, changes } = split(rows, walk.limit, (row) =>
    row.body === null ? undefined : employeeBytes(row.body, hidden),
  );
  if (!header) return undefined;
  return {
    state: {
      counter: Number(header.stamp),
      purgedThrough: Number(header.purged),
      createdStamp: Number(header.created),
    },
    changes,
  };
}

type CycleChangeRow = CompoundRow &
  Pick<MeritCycleRow, 'name' | 'start_date' | 'end_date' | 'created_date' | 'status'> & {
    purged: number | string | null;
  };

/** A page of the merit cycle changes the scope may read. */
export async function readMeritCycleChanges(
  db: Db,
  scope: ReadScope,
  walk: DeltaWalk,
): Promise<ChangesRead<MeritCycle>> {
  const { organizationId } = scope;
  const inScope = sql`organization_id = ${organizationId}${inCycleScope(scope, sql`id`)}`;
  const { rows } = await changesQuery<CycleChangeRow>(
    sql`select ${sql.lit(HEADER)} as kind, change_seq as stamp, null as id, null as name,
           null as status, null as start_date, null as end_date, null as created_date,
           purged_change_seq as purged
      from organizations where id = ${organizationId}`,
    walk,
    {
      table: 'merit_cycles',
      where: inScope,
      columns: sql`, name, status, start_date, end_date, created_date`,
      row: sql`name, status, start_date, end_date, created_date, null`,
    },
    {
      table: 'removed_merit_cycles',
      where: inScope,
      columns: sql``,
      row: sql`null, null, null, null, null, null`,
    },
  ).execute(db);
  const { header, changes } = split(rows, walk.limit, (row) =>
    Number(row.kind) === REMOVED ? undefined : toMeritCycle({ ...row, id: row.id as string }),
  );
  // The key's organisation exists: the key was found by it.
  if (!header) throw new Error(`organisation ${organizationId} not found`);
  return {
    state: { counter: Number(header.stamp), purgedThrough: Number(header.purged) },
    changes,
  };
}
