// Naming the organisation's manager column (`compplan orgs set SLUG --manager-column KEY`,
// Settings → Roles & Permissions): checked to be a text column (or text part) of the data,
// then, as one change of the organisation's data (it can move employees in and out of
// reporting-line slices, which deltas then show), every employee's manager email written
// again and every slice refreshed — with its audit log entry, in one transaction.

import { KeyManagementError } from '../api-keys/errors.js';
import { type Actor, CLI_ACTOR } from '../audit/entry.js';
import { recordAction } from '../audit/repository.js';
import { OrganizationChange } from '../changes/change.js';
import { inOrganizationTransaction } from '../changes/transaction.js';
import { DEFAULT_CHANGE_RETENTION_DAYS } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';
import { findOrganizationBySlug } from '../tenancy/organizations.js';
import { checkTextColumns, textColumnOf } from './columns.js';
import { storedDefinition } from './definition.js';
import { managerColumnOf, reportingLoops, writeManagerKeys } from './manager-column.js';
import { refreshSlicesOfCycle, slicesOf } from './repository.js';

export interface ManagerColumnChange {
  /** Reporting loops now found, by cycle (as an import's summary reports them). */
  reportingLoops: { meritCycleId: string; loops: string[][] }[];
}

/** Names the manager column (`null`: none), or refuses with what is wrong. */
export async function setManagerColumn(
  database: DatabaseHandle,
  slug: string,
  column: string | null,
  options: { actor?: Actor; changeRetentionDays?: number; now?: Date } = {},
): Promise<ManagerColumnChange> {
  const { db, dialect } = database;
  const organization = await findOrganizationBySlug(db, slug);
  if (!organization) throw new KeyManagementError(`No organisation with slug "${slug}"`);
  if (column !== null) {
    if (column.trim().length === 0) {
      throw new KeyManagementError(
        '--manager-column needs a column key, such as managerEmail (or none to clear it)',
      );
    }
    await checkTextColumns(db, organization, [textColumnOf(column)], '--manager-column');
  }
  const now = (options.now ?? new Date()).toISOString();
  return inOrganizationTransaction(database, async (trx, lock) => {
    await lock(slug);
    if (column === null) {
      const following = (
        await trx
          .selectFrom('api_keys')
          .innerJoin('row_slices', 'row_slices.id', 'api_keys.row_slice_id')
          .select(['api_keys.id', 'row_slices.definition'])
          .where('api_keys.organization_id', '=', organization.id)
          .where('api_keys.revoked_at', 'is', null)
          .execute()
      ).filter((key) => storedDefinition(key.definition).reportsTo !== null);
      if (following.length > 0) {
        throw new KeyManagementError(
          `The manager column of ${slug} cannot be cleared: ${following.map((key) => key.id).join(', ')} ${following.length === 1 ? 'reads a reporting line' : 'read reporting lines'} through it. Revoke ${following.length === 1 ? 'that key' : 'those keys'} first, or name another manager column.`,
        );
      }
    }
    const change = await OrganizationChange.begin(trx, dialect, organization.id, now);
    await trx
      .updateTable('organizations')
      .set({ manager_column: column })
      .where('id', '=', organization.id)
      .execute();
    await writeManagerKeys(trx, dialect, organization.id, managerColumnOf(column), null);
    const cycles = await trx
      .selectFrom('merit_cycles')
      .select('id')
      .where('organization_id', '=', organization.id)
      .orderBy('id')
      .execute();
    const found: ManagerColumnChange['reportingLoops'] = [];
    const sliced = (await slicesOf(trx, organization.id)).length > 0;
    for (const { id } of cycles) {
      if (column !== null) {
        const loops = await reportingLoops(trx, id);
        if (loops.length > 0) found.push({ meritCycleId: id, loops });
      }
      if (sliced) await refreshSlicesOfCycle(trx, change, id);
    }
    await change.finish(trx, options.changeRetentionDays ?? DEFAULT_CHANGE_RETENTION_DAYS);
    await recordAction(trx, {
      organizationId: organization.id,
      action: 'settings.changed',
      actor: options.actor ?? CLI_ACTOR,
      details: { managerColumn: column },
      at: new Date(now),
    });
    return { reportingLoops: found };
  });
}
