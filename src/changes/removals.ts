// Tombstones: what delta sync remembers of removed items (migration 0010), written in
// the transaction of the change that removed them, with its stamp. An item imported
// again under the same id (in the same place) is no longer removed: its tombstone goes,
// so that a delta shows it once, in its latest state.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/types.js';
import type { OrganizationChange } from './change.js';

type Tx = Kysely<Database>;

/**
 * Remembers the employees of a cycle that an import with --prune is about to remove:
 * those matched by no staged employee (`matches`: the import's table of matched stored
 * ids).
 */
export async function rememberPrunedEmployees(
  trx: Tx,
  change: OrganizationChange,
  meritCycleId: string,
  matches: string,
): Promise<void> {
  // Values in a select list get no type from the column they go to: the stamps are
  // inlined (integers of ours), the time typed for PostgreSQL.
  const at = change.dialect === 'postgres' ? sql`${change.at}::timestamptz` : sql`${change.at}`;
  const result =
    await sql`insert into removed_employees (merit_cycle_id, id, organization_id, change_seq, removed_at)
    select e.merit_cycle_id, e.id, e.organization_id,
           ${sql.lit(change.nextStamp - 1)} + row_number() over (order by e.id), ${at}
      from merit_cycle_employees e
     where e.merit_cycle_id = ${meritCycleId}
       and not exists (select 1 from ${sql.table(matches)} m where m.stored_id = e.id)
    on conflict (merit_cycle_id, id)
      do update set change_seq = excluded.change_seq, removed_at = excluded.removed_at`.execute(
      trx,
    );
  change.used(Number(result.numAffectedRows ?? 0n));
}

/**
 * Forgets the tombstones of employees an import created again in the cycle they were
 * removed from: staged rows of the cycle (`cycleIndex`) that matched no stored employee.
 * Almost every cycle has no tombstone at all, which one index probe finds first.
 */
export async function forgetRemovedEmployees(
  trx: Tx,
  meritCycleId: string,
  staging: string,
  matches: string,
  cycleIndex: number,
): Promise<void> {
  const any = await trx
    .selectFrom('removed_employees')
    .select('id')
    .where('merit_cycle_id', '=', meritCycleId)
    .limit(1)
    .executeTakeFirst();
  if (!any) return;
  await sql`delete from removed_employees
    where merit_cycle_id = ${meritCycleId}
      and id in (select s.new_id from ${sql.table(staging)} s
                  where s.cycle_index = ${sql.lit(cycleIndex)}
                    and not exists (select 1 from ${sql.table(matches)} m where m.seq = s.seq))`.execute(
    trx,
  );
}

/** Forgets the tombstone of a merit cycle created again under its id. */
export async function forgetRemovedCycle(
  trx: Tx,
  organizationId: string,
  meritCycleId: string,
): Promise<void> {
  await trx
    .deleteFrom('removed_merit_cycles')
    .where('organization_id', '=', organizationId)
    .where('id', '=', meritCycleId)
    .execute();
}

/**
 * Remembers a merit cycle about to be removed, and forgets its employees' tombstones:
 * the cycle's own stands for every one of them (its employee delta answers 404).
 */
export async function rememberRemovedCycle(
  trx: Tx,
  change: OrganizationChange,
  meritCycleId: string,
): Promise<void> {
  await trx.deleteFrom('removed_employees').where('merit_cycle_id', '=', meritCycleId).execute();
  await trx
    .insertInto('removed_merit_cycles')
    .values({
      organization_id: change.organizationId,
      id: meritCycleId,
      change_seq: change.nextStamp,
      removed_at: change.at,
    })
    .onConflict((conflict) =>
      conflict.columns(['organization_id', 'id']).doUpdateSet({
        change_seq: change.nextStamp,
        removed_at: change.at,
      }),
    )
    .execute();
  change.used(1);
}
