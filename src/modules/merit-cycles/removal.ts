// Removing a merit cycle (`compplan cycles remove`): the cycle and its employees, in one
// transaction serialized with the organisation's imports, remembered as a removal that
// the merit cycles delta reports (src/changes/) and a `meritCycle.removed` webhook event
// (src/webhooks/outbox.ts). Its employee delta answers 404 from then
// on: the cycle's removal stands for every one of its employees.
import { type Actor, CLI_ACTOR } from '../../audit/entry.js';
import { recordAction } from '../../audit/repository.js';
import { OrganizationChange } from '../../changes/change.js';
import { rememberRemovedCycle } from '../../changes/removals.js';
import { inOrganizationTransaction } from '../../changes/transaction.js';
import type { DatabaseHandle } from '../../db/connect.js';
import { isId } from '../../ids.js';
import { recordMeritCycleRemoved } from '../../webhooks/outbox.js';
import { employeeCountOf } from './overview.js';

export interface RemovedCycle {
  id: string;
  name: string;
  /** The organisation's slug. */
  organization: string;
  employees: number;
}

export class NoSuchCycleError extends Error {
  override name = 'NoSuchCycleError';
}

/** What removing the cycle would remove; undefined when there is no such cycle. */
export async function describeCycle(
  { db }: DatabaseHandle,
  meritCycleId: string,
): Promise<(RemovedCycle & { organizationId: string }) | undefined> {
  if (!isId('mc', meritCycleId)) return undefined;
  const row = await db
    .selectFrom('merit_cycles as c')
    .innerJoin('organizations as o', 'o.id', 'c.organization_id')
    .select(['c.id', 'c.name', 'o.slug', 'o.id as organizationId'])
    .select(employeeCountOf)
    .where('c.id', '=', meritCycleId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    name: row.name,
    organization: row.slug,
    employees: Number(row.employees),
    organizationId: row.organizationId,
  };
}

/** Removes the merit cycle and its employees; throws NoSuchCycleError when there is none. */
export async function removeMeritCycle(
  database: DatabaseHandle,
  meritCycleId: string,
  options: { changeRetentionDays: number; now?: Date; actor?: Actor },
): Promise<RemovedCycle> {
  const at = (options.now ?? new Date()).toISOString();
  return inOrganizationTransaction(database, async (trx, lock) => {
    const seen = await describeCycle({ ...database, db: trx }, meritCycleId);
    if (seen) await lock(seen.organization);
    // Read again under the organisation's lock: an import may have removed it meanwhile.
    const cycle = seen && (await describeCycle({ ...database, db: trx }, meritCycleId));
    if (!cycle) throw new NoSuchCycleError(`no merit cycle ${meritCycleId}`);
    const { organizationId, ...removed } = cycle;
    const change = await OrganizationChange.begin(trx, database.dialect, organizationId, at);
    await rememberRemovedCycle(trx, change, meritCycleId);
    await trx
      .deleteFrom('merit_cycle_employees')
      .where('merit_cycle_id', '=', meritCycleId)
      .execute();
    await trx.deleteFrom('merit_cycles').where('id', '=', meritCycleId).execute();
    await change.finish(trx, options.changeRetentionDays);
    // Webhook subscribers hear of it after the commit, never of a removal rolled back.
    await recordMeritCycleRemoved(trx, organizationId, meritCycleId, at);
    await recordAction(trx, {
      organizationId,
      action: 'cycle.removed',
      actor: options.actor ?? CLI_ACTOR,
      target: meritCycleId,
      details: { name: removed.name, employees: removed.employees },
      at: new Date(at),
    });
    return removed;
  });
}
