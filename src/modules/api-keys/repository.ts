import { sql } from 'kysely';
import type { Db, Dialect } from '../../db/connect.js';
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

/** What a request authenticates as. */
export interface ActiveKey {
  id: string;
  organizationId: string;
}

// Keys per statement of recordLastUsed (two values a key): far below either database's
// bound parameters (SQLite 32,766).
const KEYS_PER_STATEMENT = 500;

/** The key a request authenticates as: only a key that is not revoked. */
export async function findActiveKeyByHash(
  db: Db,
  secretHash: string,
): Promise<ActiveKey | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'organization_id'])
    .where('secret_hash', '=', secretHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && { id: row.id, organizationId: row.organization_id };
}

/**
 * The number that changes whenever a key may have stopped being valid (migration 0007:
 * triggers bump it in the transaction that revokes, changes or deletes a key).
 */
export async function readKeysRevision(db: Db): Promise<number> {
  const row = await db
    .selectFrom('api_keys_revision')
    .select('revision')
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  // PostgreSQL's bigint arrives as text.
  return Number(row.revision);
}

/**
 * Writes when keys were last used, in one statement per KEYS_PER_STATEMENT keys
 * rather than one a key: a flush holds SQLite's one connection (which every request
 * that reads the database waits for) and one of PostgreSQL's for that much less. 3,000
 * keys on the benchmark's SQLite file: 66–75 ms a flush, most of it the commit, against
 * 82–92 ms a statement a key.
 */
export async function recordLastUsed(
  db: Db,
  dialect: Dialect,
  usedAt: ReadonlyMap<string, string>,
): Promise<void> {
  if (usedAt.size === 0) return;
  const entries = [...usedAt];
  // A VALUES list's columns are column1, column2 on both databases; PostgreSQL reads
  // the times as text, which a timestamptz column takes only by an explicit cast.
  const at = dialect === 'postgres' ? sql`cast(v.column2 as timestamptz)` : sql`v.column2`;
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < entries.length; start += KEYS_PER_STATEMENT) {
      const rows = entries
        .slice(start, start + KEYS_PER_STATEMENT)
        .map(([id, when]) => sql`(${id}, ${when})`);
      await sql`update api_keys set last_used_at = ${at}
        from (values ${sql.join(rows)}) as v where api_keys.id = v.column1`.execute(trx);
    }
  });
}
