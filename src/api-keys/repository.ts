import { sql } from 'kysely';
import { allowedRanges, type Range } from '../address-ranges.js';
import type { Db, Dialect } from '../db/connect.js';
import type { ApiKeyRow } from '../db/types.js';
import { toIso, toIsoOrNull } from '../db/values.js';
import {
  fromStoredList,
  type ReadScope,
  type RowSliceRef,
  readScope,
  toStoredList,
} from '../tenancy/scope.js';

/** A key as management shows it: never the secret nor its hash. */
export interface ApiKey {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** The client address of the last use (as TRUST_PROXY resolves it). */
  lastUsedAddress: string | null;
  revokedAt: string | null;
  /** The merit cycles it reads; null: every cycle. */
  cycles: string[] | null;
  /** Column keys absent from every employee it reads. */
  hiddenColumns: string[];
  /** Column types whose columns (and composite parts) are absent; sorted, often empty. */
  hiddenColumnTypes: string[];
  expiresAt: string | null;
  /** The address ranges (CIDR) it may be used from; null: any address. */
  allowedAddresses: string[] | null;
  /** Until when the secret before the last roll still works; null: none does. */
  previousSecretExpiresAt: string | null;
  /** The slice of the organisation's employees it reads; null: every employee. */
  rowSlice: RowSliceRef | null;
}

type KeyRow = ApiKeyRow & { row_slice_description: string | null };

export function toApiKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: toIso(row.created_at),
    lastUsedAt: toIsoOrNull(row.last_used_at),
    lastUsedAddress: row.last_used_address,
    revokedAt: toIsoOrNull(row.revoked_at),
    cycles: fromStoredList(row.cycle_scope),
    hiddenColumns: fromStoredList(row.hidden_columns) ?? [],
    hiddenColumnTypes: fromStoredList(row.hidden_column_types) ?? [],
    expiresAt: toIsoOrNull(row.expires_at),
    allowedAddresses: fromStoredList(row.allowed_addresses),
    previousSecretExpiresAt:
      row.previous_secret_hash === null ? null : toIsoOrNull(row.previous_secret_expires_at),
    rowSlice: sliceOf(row),
  };
}

const sliceOf = (row: {
  row_slice_id: string | null;
  row_slice_description: string | null;
}): RowSliceRef | null =>
  row.row_slice_id === null
    ? null
    : { id: row.row_slice_id, description: row.row_slice_description ?? '' };

/** The keys with their slices' descriptions. */
const keysWithSlices = (db: Db) =>
  db
    .selectFrom('api_keys')
    .leftJoin('row_slices', 'row_slices.id', 'api_keys.row_slice_id')
    .selectAll('api_keys')
    .select('row_slices.description as row_slice_description');

export interface NewApiKey {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  secretHash: string;
  createdAt: string;
  cycles: readonly string[] | null;
  hiddenColumns: readonly string[];
  hiddenColumnTypes: readonly string[];
  expiresAt: string | null;
  allowedAddresses: readonly string[] | null;
  rowSliceId: string | null;
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
      cycle_scope: toStoredList(key.cycles),
      hidden_columns: key.hiddenColumns.length === 0 ? null : toStoredList(key.hiddenColumns),
      expires_at: key.expiresAt,
      allowed_addresses: toStoredList(key.allowedAddresses),
      hidden_column_types:
        key.hiddenColumnTypes.length === 0 ? null : toStoredList(key.hiddenColumnTypes),
      row_slice_id: key.rowSliceId,
    })
    .execute();
}

export async function listApiKeys(db: Db, organizationId: string): Promise<ApiKey[]> {
  const rows = await keysWithSlices(db)
    .where('api_keys.organization_id', '=', organizationId)
    .orderBy('api_keys.created_at')
    .orderBy('api_keys.id')
    .execute();
  return rows.map(toApiKey);
}

export async function findApiKey(db: Db, id: string): Promise<ApiKey | undefined> {
  const row = await keysWithSlices(db).where('api_keys.id', '=', id).executeTakeFirst();
  return row && toApiKey(row);
}

/** Marks a key revoked; revoking twice keeps the first time. Whether it was revoked now. */
export async function revokeApiKey(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Gives the key a new secret; the one it had keeps working until `previousExpiresAt`
 * (a secret from an earlier roll stops at once). Only a key that is not revoked.
 */
export async function rollApiKeySecret(
  db: Db,
  id: string,
  next: { prefix: string; secretHash: string; previousExpiresAt: string },
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set((eb) => ({
      previous_secret_hash: eb.ref('secret_hash'),
      previous_secret_expires_at: next.previousExpiresAt,
      secret_hash: next.secretHash,
      prefix: next.prefix,
    }))
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** What a request authenticates as: the key, what it may read, and until when. */
export interface ActiveKey extends ReadScope {
  id: string;
  /** When this secret stops working (ms since the epoch); null: never. */
  expiresAt: number | null;
  /** allowedAddresses, parsed once when the key is looked up; null: any address. */
  addressRanges: readonly Range[] | null;
}

const msOrNull = (value: Date | string | null) =>
  value === null ? null : Date.parse(toIso(value));

// Keys per statement of recordLastUsed (three values a key): far below either database's
// bound parameters (SQLite 32,766).
const KEYS_PER_STATEMENT = 500;

/**
 * The key a request authenticates as: only a key that is not revoked, by its secret or by
 * the secret it had before its last roll. Expiry is the caller's to compare with its clock.
 */
export async function findActiveKeyByHash(
  db: Db,
  secretHash: string,
): Promise<ActiveKey | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .leftJoin('row_slices', 'row_slices.id', 'api_keys.row_slice_id')
    .select([
      'api_keys.id',
      'api_keys.organization_id',
      'cycle_scope',
      'hidden_columns',
      'expires_at',
      'secret_hash',
      'previous_secret_expires_at',
      'allowed_addresses',
      'hidden_column_types',
      'row_slice_id',
      'row_slices.description as row_slice_description',
    ])
    .where((eb) =>
      eb.or([eb('secret_hash', '=', secretHash), eb('previous_secret_hash', '=', secretHash)]),
    )
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const keyExpiresAt = msOrNull(row.expires_at);
  // The previous secret works until its grace ends, and never past the key's own expiry.
  const expiresAt =
    row.secret_hash === secretHash
      ? keyExpiresAt
      : Math.min(
          msOrNull(row.previous_secret_expires_at) ?? Number.NEGATIVE_INFINITY,
          keyExpiresAt ?? Number.POSITIVE_INFINITY,
        );
  const allowed = fromStoredList(row.allowed_addresses);
  return {
    id: row.id,
    expiresAt,
    addressRanges: allowed === null ? null : allowedRanges(allowed),
    ...readScope(
      row.organization_id,
      fromStoredList(row.cycle_scope),
      fromStoredList(row.hidden_columns) ?? [],
      allowed,
      fromStoredList(row.hidden_column_types) ?? [],
      sliceOf(row),
    ),
  };
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

/** When a key was last used (ms since the epoch) and by which client address. */
export interface LastUse {
  at: number;
  address: string;
}

/**
 * Writes when and from where keys were last used, in one statement per KEYS_PER_STATEMENT keys
 * rather than one a key: a flush holds SQLite's one connection (which every request
 * that reads the database waits for) and one of PostgreSQL's for that much less. 3,000
 * keys on the benchmark's SQLite file: 66–75 ms a flush, most of it the commit, against
 * 82–92 ms a statement a key.
 */
export async function recordLastUsed(
  db: Db,
  dialect: Dialect,
  lastUses: ReadonlyMap<string, LastUse>,
): Promise<void> {
  if (lastUses.size === 0) return;
  const entries = [...lastUses];
  // A VALUES list's columns are column1, column2, … on both databases; PostgreSQL reads
  // the times as text, which a timestamptz column takes only by an explicit cast.
  const at = dialect === 'postgres' ? sql`cast(v.column2 as timestamptz)` : sql`v.column2`;
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < entries.length; start += KEYS_PER_STATEMENT) {
      const rows = entries
        .slice(start, start + KEYS_PER_STATEMENT)
        .map(([id, use]) => sql`(${id}, ${new Date(use.at).toISOString()}, ${use.address})`);
      await sql`update api_keys set last_used_at = ${at}, last_used_address = v.column3
        from (values ${sql.join(rows)}) as v where api_keys.id = v.column1`.execute(trx);
    }
  });
}
