import type { Db } from '../db/connect.js';
import type { OrganizationRow } from '../db/types.js';
import { fromBoolean, toBoolean, toIso } from '../db/values.js';

export interface Organization {
  id: string;
  slug: string;
  name: string;
  apiKeysEnabled: boolean;
  createdAt: string;
  /** The column (`key` or `key/part`) holding each employee's manager's email; null: none. */
  managerColumn: string | null;
}

export function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    apiKeysEnabled: toBoolean(row.api_keys_enabled),
    createdAt: toIso(row.created_at),
    managerColumn: row.manager_column ?? null,
  };
}

export async function listOrganizations(db: Db): Promise<Organization[]> {
  const rows = await db.selectFrom('organizations').selectAll().orderBy('slug').execute();
  return rows.map(toOrganization);
}

export async function findOrganizationBySlug(
  db: Db,
  slug: string,
): Promise<Organization | undefined> {
  const row = await db
    .selectFrom('organizations')
    .selectAll()
    .where('slug', '=', slug)
    .executeTakeFirst();
  return row && toOrganization(row);
}

export async function findOrganizationById(db: Db, id: string): Promise<Organization | undefined> {
  const row = await db
    .selectFrom('organizations')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row && toOrganization(row);
}

/** An import's organisation: created, or its name and setting written (src/import/merge.ts). */
export async function saveOrganization(
  db: Db,
  organization: Omit<Organization, 'managerColumn'>,
  isNew: boolean,
) {
  const { id, slug, name, apiKeysEnabled, createdAt } = organization;
  const fields = { name, api_keys_enabled: fromBoolean(apiKeysEnabled) };
  await (isNew
    ? db.insertInto('organizations').values({ ...fields, id, slug, created_at: createdAt })
    : db.updateTable('organizations').set(fields).where('id', '=', id)
  ).execute();
}

/** Settings → Roles & Permissions: may administrators generate API keys? */
export async function setApiKeysEnabled(db: Db, organizationId: string, enabled: boolean) {
  await db
    .updateTable('organizations')
    .set({ api_keys_enabled: fromBoolean(enabled) })
    .where('id', '=', organizationId)
    .execute();
}
