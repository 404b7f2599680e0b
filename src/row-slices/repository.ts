// The stored slices of an organisation: one row per definition, shared by every key that
// reads it, kept after its keys are revoked (their audit entries name it).
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { OrganizationChange } from '../changes/change.js';
import { lockOrganizationChanges } from '../changes/transaction.js';
import type { Db, Dialect } from '../db/connect.js';
import type { Database } from '../db/types.js';
import {
  canonicalDefinition,
  describeSlice,
  type SliceDefinition,
  storedDefinition,
} from './definition.js';
import { fillSlice, refreshSlice, type StoredSlice } from './membership.js';

type Tx = Kysely<Database>;

/** A slice as keys and the audit log show it. */
export interface RowSlice {
  id: string;
  /** As people read it: `department in (Engineering, Sales)`. */
  description: string;
}

const SLICE_ID = /^sl_[0-9a-f]{32}$/;

/**
 * The slice of the definition in the organisation, stored (and its members computed) in
 * the transaction when no key had it before — a transaction of `longDb`, as an import's
 * (api-keys/service.ts): computing the members reads the organisation's employees once.
 * Its id is derived from the definition, so that two transactions making the same slice
 * at once make the same row (the second one waits for the first on the unique key, then
 * finds it).
 */
export async function sliceFor(
  trx: Tx,
  dialect: Dialect,
  organization: { id: string; slug: string },
  definition: SliceDefinition,
  now: string,
): Promise<RowSlice> {
  const organizationId = organization.id;
  const text = canonicalDefinition(definition);
  await lockOrganizationChanges(trx, dialect, organization.slug);
  const found = await trx
    .selectFrom('row_slices')
    .select(['id', 'description'])
    .where('organization_id', '=', organizationId)
    .where('definition', '=', text)
    .executeTakeFirst();
  if (found) return found;
  const id = `sl_${createHash('sha256').update(`${organizationId}\n${text}`).digest('hex').slice(0, 32)}`;
  const description = describeSlice(definition);
  await trx
    .insertInto('row_slices')
    .values({ id, organization_id: organizationId, definition: text, description, created_at: now })
    .execute();
  await fillSlice(trx, dialect, { id, organizationId, definition });
  return { id, description };
}

/** Every slice of the organisation, with its definition. */
export async function slicesOf(db: Db | Tx, organizationId: string): Promise<StoredSlice[]> {
  const rows = await db
    .selectFrom('row_slices')
    .select(['id', 'definition'])
    .where('organization_id', '=', organizationId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    organizationId,
    definition: storedDefinition(row.definition),
  }));
}

/** The slices with these ids, as people read them (the audit log's entries name them). */
export async function slicesById(db: Db, ids: readonly string[]): Promise<Map<string, RowSlice>> {
  const wanted = ids.filter((id) => SLICE_ID.test(id));
  if (wanted.length === 0) return new Map();
  const rows = await db
    .selectFrom('row_slices')
    .select(['id', 'description'])
    .where('id', 'in', wanted)
    .execute();
  return new Map(rows.map((row) => [row.id, { id: row.id, description: row.description }]));
}

/**
 * After a change wrote the employees of `meritCycleId`: every slice of the organisation
 * brought up to date there, with one stamp of the change for what entered or left.
 */
export async function refreshSlicesOfCycle(
  trx: Tx,
  change: OrganizationChange,
  meritCycleId: string,
): Promise<void> {
  const slices = await slicesOf(trx, change.organizationId);
  if (slices.length === 0) return;
  const stamp = change.nextStamp;
  let moved = 0;
  for (const slice of slices) {
    const refreshed = await refreshSlice(
      trx,
      change.dialect,
      slice,
      meritCycleId,
      stamp,
      change.at,
    );
    moved += refreshed.entered + refreshed.left;
  }
  if (moved > 0) change.used(1);
}

/** How many employees the slice reads today in the cycles (null: every cycle). */
export async function countSliceEmployees(
  db: Db,
  sliceId: string,
  cycleIds: readonly string[] | null,
): Promise<number> {
  let query = db
    .selectFrom('row_slice_members')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('slice_id', '=', sliceId);
  if (cycleIds !== null) query = query.where('merit_cycle_id', 'in', [...cycleIds]);
  const row = await query.executeTakeFirst();
  return Number(row?.count ?? 0);
}
