// Who a slice reads, precomputed per merit cycle (migration 0018): the key's creation
// computes a new slice's members, and every import refreshes the members of each slice of
// its organisation in the cycles it changed, in its transaction — so a sliced read is an
// index range scan of the members, never the slice's conditions evaluated per request.
//
// A member carries its employee's stored text (migration 0018 says why), written again
// whenever the employee is. A refresh keeps delta sync exact for sliced keys
// (docs/delta-sync.md, "Slices"): a member carries the newest stamp of what the key saw
// change — its employee's own stamp, or the stamp of the import that brought it into the
// slice — and an employee that left the slice (or was removed while in it) leaves a
// departure with the import's stamp, which the sliced delta reads as `removed`.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Db, Dialect } from '../db/connect.js';
import type { Database } from '../db/types.js';
import { textValueSql } from './columns.js';
import type { SliceDefinition } from './definition.js';

type Tx = Kysely<Database>;

/** A slice of an organisation, as stored. */
export interface StoredSlice {
  id: string;
  organizationId: string;
  definition: SliceDefinition;
}

/**
 * Whether the employee `e` of cycle `meritCycleId` is in the slice: each condition's text
 * among its values, and the reporting line (walked from the manager down, one index
 * lookup of the manager column a level; UNION drops what was seen, so a loop in the data
 * ends the walk instead of repeating it).
 */
export function inSliceSql(
  dialect: Dialect,
  definition: SliceDefinition,
  meritCycleId: string,
): RawBuilder<boolean> {
  const conditions = definition.conditions.map(
    (condition) =>
      sql`${textValueSql(dialect, condition)} in (${sql.join(condition.values.map((value) => sql`${value}`))})`,
  );
  if (definition.reportsTo !== null) {
    conditions.push(sql`e.email_key in (
      with recursive line(email_key) as (
        select r.email_key from merit_cycle_employees r
         where r.merit_cycle_id = ${meritCycleId} and r.manager_key = ${definition.reportsTo}
        union
        select r.email_key from line
          join merit_cycle_employees r
            on r.merit_cycle_id = ${meritCycleId} and r.manager_key = line.email_key
      ) select email_key from line)`);
  }
  return sql<boolean>`(${sql.join(conditions, sql` and `)})`;
}

/** Employees a statement of a SQLite count reads before the server answers others. */
const COUNT_CHUNK = 5_000;

/**
 * How many employees of the cycles (null: every cycle of the organisation) the slice would
 * read today: what Settings → Connections says before a key is made. A slice that does not
 * exist yet has no members to count, so its conditions are evaluated over the cycles, as
 * the key's creation will: about 7 µs an employee on SQLite. PostgreSQL counts on its own
 * connections (`longDb`: no request's statement limit) while the server answers others.
 * SQLite runs on the server's one thread, so it counts in chunks of the list's order, and
 * lets waiting requests in between: a count over a million employees takes seconds, but
 * never stops the API for more than one chunk. A reporting line is counted from the line
 * itself (index lookups of its members), whatever the size of the cycle.
 */
export async function countSliceMembers(
  database: { db: Db; longDb: Db; dialect: Dialect },
  organizationId: string,
  definition: SliceDefinition,
  cycleIds: readonly string[] | null,
): Promise<number> {
  const { db, dialect } = database;
  const cycles =
    cycleIds ??
    (
      await db
        .selectFrom('merit_cycles')
        .select('id')
        .where('organization_id', '=', organizationId)
        .execute()
    ).map((row) => row.id);
  let total = 0;
  for (const cycle of cycles) {
    const inSlice = inSliceSql(dialect, definition, cycle);
    const ofCycle = sql`e.organization_id = ${organizationId} and e.merit_cycle_id = ${cycle}`;
    if (dialect === 'postgres' || definition.reportsTo !== null) {
      const { rows } = await sql<{ count: number | string }>`
        select count(*) as count from merit_cycle_employees e
         where ${ofCycle} and ${inSlice}`.execute(dialect === 'postgres' ? database.longDb : db);
      total += Number(rows[0]?.count ?? 0);
      continue;
    }
    let after: { last_name: string; first_name: string; id: string } | undefined;
    for (;;) {
      const from = after
        ? sql` and (e.last_name, e.first_name, e.id) > (${after.last_name}, ${after.first_name}, ${after.id})`
        : sql``;
      const { rows } = await sql<{
        last_name: string;
        first_name: string;
        id: string;
        member: number;
      }>`select e.last_name, e.first_name, e.id, ${inSlice} as member
          from merit_cycle_employees e where ${ofCycle}${from}
         order by e.last_name, e.first_name, e.id limit ${COUNT_CHUNK}`.execute(db);
      for (const row of rows) total += Number(row.member) === 1 ? 1 : 0;
      after = rows.at(-1);
      if (rows.length < COUNT_CHUNK) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return total;
}

/** A new slice's members in every cycle of its organisation, with their employees' stamps. */
export async function fillSlice(trx: Tx, dialect: Dialect, slice: StoredSlice): Promise<void> {
  const cycles = await trx
    .selectFrom('merit_cycles')
    .select('id')
    .where('organization_id', '=', slice.organizationId)
    .execute();
  for (const { id: cycle } of cycles) {
    await sql`insert into row_slice_members
        (slice_id, merit_cycle_id, last_name, first_name, id, change_seq, body, flat_key, flat_line)
      select ${slice.id}, e.merit_cycle_id, e.last_name, e.first_name, e.id, e.change_seq, e.body,
             e.flat_key, e.flat_line
        from merit_cycle_employees e
       where e.organization_id = ${slice.organizationId} and e.merit_cycle_id = ${cycle}
         and ${inSliceSql(dialect, slice.definition, cycle)}`.execute(trx);
  }
}

// The members a refresh computes, before they are compared with the stored ones.
const NOW = 'compplan_slice_members';

/** What a refresh did to a slice in a cycle. */
export interface Refreshed {
  entered: number;
  left: number;
}

/**
 * Brings the slice's members in `meritCycleId` up to date after a change stamped from
 * `stamp` on (which the caller then counts as used when anything entered or left): an
 * employee now in the slice and not before enters with `stamp`, one no longer in it leaves
 * a departure with `stamp`, and a member whose employee changed takes the employee's stamp.
 */
export async function refreshSlice(
  trx: Tx,
  dialect: Dialect,
  slice: StoredSlice,
  meritCycleId: string,
  stamp: number,
  at: string,
): Promise<Refreshed> {
  const run = (query: RawBuilder<unknown>) => query.execute(trx);
  const id = dialect === 'postgres' ? sql.raw('text collate "C"') : sql.raw('text');
  const temporary = dialect === 'postgres' ? sql.raw(' on commit drop') : sql.raw('');
  await run(sql`create temporary table if not exists ${sql.table(NOW)} (
    employee_id ${id} primary key, last_name ${id} not null, first_name ${id} not null,
    change_seq bigint not null)${temporary}`);
  await run(sql`delete from ${sql.table(NOW)}`);
  await run(sql`insert into ${sql.table(NOW)} (employee_id, last_name, first_name, change_seq)
    select e.id, e.last_name, e.first_name, e.change_seq from merit_cycle_employees e
     where e.organization_id = ${slice.organizationId} and e.merit_cycle_id = ${meritCycleId}
       and ${inSliceSql(dialect, slice.definition, meritCycleId)}`);
  const members = sql`row_slice_members m where m.slice_id = ${slice.id} and m.merit_cycle_id = ${meritCycleId}`;
  const notNow = sql`not exists (select 1 from ${sql.table(NOW)} n where n.employee_id = m.id)`;

  const left = await run(sql`insert into row_slice_departures
      (slice_id, merit_cycle_id, employee_id, organization_id, change_seq, removed_at)
    select m.slice_id, m.merit_cycle_id, m.id, ${slice.organizationId}, ${stamp}, ${at}
      from ${members} and ${notNow}
    on conflict (slice_id, merit_cycle_id, employee_id)
      do update set change_seq = excluded.change_seq, removed_at = excluded.removed_at`);
  // Gone, or renamed (a member's key is its place in the list).
  await run(sql`delete from row_slice_members where slice_id = ${slice.id}
    and merit_cycle_id = ${meritCycleId} and not exists (
      select 1 from ${sql.table(NOW)} n where n.employee_id = row_slice_members.id
        and n.last_name = row_slice_members.last_name and n.first_name = row_slice_members.first_name)`);
  const entered = await run(sql`insert into row_slice_members
      (slice_id, merit_cycle_id, last_name, first_name, id, change_seq, body, flat_key, flat_line)
    select ${slice.id}, ${meritCycleId}, n.last_name, n.first_name, n.employee_id,
           case when n.change_seq > ${stamp} then n.change_seq else ${stamp} end, e.body,
           e.flat_key, e.flat_line
      from ${sql.table(NOW)} n join merit_cycle_employees e on e.id = n.employee_id
     where not exists (select 1 from row_slice_members m where m.slice_id = ${slice.id}
       and m.merit_cycle_id = ${meritCycleId} and m.id = n.employee_id)`);
  await run(sql`delete from row_slice_departures where slice_id = ${slice.id}
    and merit_cycle_id = ${meritCycleId}
    and employee_id in (select employee_id from ${sql.table(NOW)})`);
  // Changed in this import and still in the slice; or unchanged, with the flat line the
  // import gave its employee in place (import/merge.ts), which changes no stamp.
  const employee = sql`from merit_cycle_employees e where e.id = n.employee_id`;
  await run(sql`update row_slice_members
      set change_seq = case when n.change_seq > row_slice_members.change_seq
                            then n.change_seq else row_slice_members.change_seq end,
          (body, flat_key, flat_line) = (select e.body, e.flat_key, e.flat_line ${employee})
      from ${sql.table(NOW)} n
     where row_slice_members.slice_id = ${slice.id}
       and row_slice_members.merit_cycle_id = ${meritCycleId}
       and n.employee_id = row_slice_members.id
       and (n.change_seq > row_slice_members.change_seq
            or row_slice_members.flat_key is distinct from (select e.flat_key ${employee}))`);
  return {
    entered: Number(entered.numAffectedRows ?? 0n),
    left: Number(left.numAffectedRows ?? 0n),
  };
}
