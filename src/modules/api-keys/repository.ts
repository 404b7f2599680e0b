import type { Db } from '../../db/connect.js';
import type { ApiKeyRow } from '../../db/types.js';
import { toIso } from '../../db/values.js';

/** A key as management shows it: never the secret nor its hash. */
export interface ApiKey {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: toIso(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : toIso(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : toIso(row.revoked_at),
  };
}

export interface NewApiKey {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  secretHash: string;
  createdAt: string;
}

export async function insertApiKey(db: Db, key: NewApiKey): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      organization_id: key.organizationId,
      name: key.name,
      prefix: key.prefix,
      secret_hash: key.secretHash,
      created_at: key.createdAt,
    })
    .execute();
}

export async function listApiKeys(db: Db, organizationId: string): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toApiKey);
}

export async function findApiKey(db: Db, id: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toApiKey(row);
}

/** Marks a key revoked; revoking twice keeps the first time. */
export async function revokeApiKey(db: Db, id: string, at: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** The key a request authenticates as: only a key that is not revoked. */
export async function findActiveKeyByHash(
  db: Db,
  secretHash: string,
): Promise<{ id: string; organizationId: string } | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'organization_id'])
    .where('secret_hash', '=', secretHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && { id: row.id, organizationId: row.organization_id };
}

export async function recordLastUsed(db: Db, usedAt: ReadonlyMap<string, string>): Promise<void> {
  if (usedAt.size === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const [id, at] of usedAt) {
      await trx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
    }
  });
}
