// Key management: what `compplan keys …` and the web application's Settings → Connections
// do. The secret exists in memory only until it is returned once.
import { type Actor, CLI_ACTOR } from '../audit/entry.js';
import { withRecordedAction } from '../audit/repository.js';
import { type Db, dialectOf } from '../db/connect.js';
import { newId } from '../ids.js';
import { checkSlice } from '../row-slices/checks.js';
import { sliceDefinitionOf } from '../row-slices/definition.js';
import { countSliceEmployees, type RowSlice, sliceFor } from '../row-slices/repository.js';
import { findOrganizationById, findOrganizationBySlug } from '../tenancy/organizations.js';
import { hiddenColumnsOf, hiddenColumnTypesOf } from './columns.js';
import { KeyManagementError } from './errors.js';
import {
  type ApiKey,
  findApiKey,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  rollApiKeySecret,
} from './repository.js';
import { allowedAddressesOf, cycleScopeOf, expiryOf, graceOf } from './restrictions.js';
import { displayPrefix, generateSecret, hashSecret } from './secret.js';

export { type ColumnChoice, type ColumnGroup, columnChoicesOf } from './columns.js';
export { KeyManagementError } from './errors.js';

export interface CreatedApiKey {
  id: string;
  /** The secret. Shown once; only its hash is kept. */
  key: string;
  org: string;
  name: string;
  createdAt: string;
}

/** A new key and what it may read (the CLI's text output and the web page show these). */
export interface CreatedRestrictedKey extends CreatedApiKey {
  cycles: string[] | null;
  hiddenColumns: string[];
  hiddenColumnTypes: string[];
  expiresAt: string | null;
  allowedAddresses: string[] | null;
  /**
   * The slice of employees it reads, and how many it reads today in the cycles it reads
   * (0 is allowed and said); null: every employee.
   */
  rowSlice: (RowSlice & { employees: number }) | null;
}

export interface NewKeyInput {
  org: string;
  name?: string | undefined;
  /** Merit cycle ids; undefined: every cycle. */
  cycles?: readonly string[] | undefined;
  /** Column keys to hide; undefined: none. Each a column of the organisation's data… */
  hiddenColumns?: readonly string[] | undefined;
  /** …unless this says they are meant for data still to come. */
  allowUnknownColumns?: boolean | undefined;
  /** Column types whose every column (and composite part) is hidden; undefined: none. */
  hiddenColumnTypes?: readonly string[] | undefined;
  /** A duration such as `90d`. */
  expiresIn?: string | undefined;
  /** A date (YYYY-MM-DD) or an ISO 8601 time. */
  expiresAt?: string | undefined;
  /** IPv4/IPv6 addresses or CIDR ranges it may be used from; undefined: any address. */
  allowedAddresses?: readonly string[] | undefined;
  /** Row conditions (`department in (Engineering, Sales)`); undefined: none. */
  rows?: string | undefined;
  /** A manager's email: only their reporting line; undefined: none. */
  reportsTo?: string | undefined;
}

export const KEY_NAME_MAX_LENGTH = 200;

async function organizationOrFail(db: Db, slug: string) {
  const organization = await findOrganizationBySlug(db, slug);
  if (!organization) throw new KeyManagementError(`No organisation with slug "${slug}"`);
  return organization;
}

/**
 * Checks everything first: a refused key writes nothing. Recorded in the audit log. Given
 * the database handle (`db` and `longDb`), a key whose slice is new is made on `longDb`:
 * computing the slice's members reads the organisation's employees once, as an import
 * does, longer than a request's statement may run (PostgreSQL; the same for SQLite).
 */
export async function createApiKey(
  database: Db | { db: Db; longDb: Db },
  input: NewKeyInput,
  now: number = Date.now(),
  actor: Actor = CLI_ACTOR,
): Promise<CreatedRestrictedKey> {
  const [db, longDb] = 'longDb' in database ? [database.db, database.longDb] : [database, database];
  const organization = await organizationOrFail(db, input.org);
  if (!organization.apiKeysEnabled) {
    throw new KeyManagementError(
      `API keys are disabled for "${organization.slug}": enable "Allow administrators to generate API keys" under Settings → Roles & Permissions (compplan orgs set ${organization.slug} --api-keys enabled)`,
    );
  }
  const name = (input.name ?? 'API key').trim();
  if (name.length === 0 || name.length > KEY_NAME_MAX_LENGTH) {
    throw new KeyManagementError(`A key name must have 1 to ${KEY_NAME_MAX_LENGTH} characters`);
  }
  const hiddenColumnTypes = hiddenColumnTypesOf(input.hiddenColumnTypes);
  const allowedAddresses = allowedAddressesOf(input.allowedAddresses);
  const expiresAt = expiryOf(input, now)?.toISOString() ?? null;
  const cycles = await cycleScopeOf(db, organization, input.cycles);
  const hiddenColumns = await hiddenColumnsOf(
    db,
    organization,
    input.hiddenColumns,
    input.allowUnknownColumns === true,
  );
  const slice = sliceDefinitionOf(input);
  if (slice !== null) await checkSlice(db, organization, slice, cycles);
  const secret = generateSecret();
  const key = {
    id: newId('key'),
    organizationId: organization.id,
    name,
    prefix: displayPrefix(secret),
    secretHash: hashSecret(secret),
    createdAt: new Date(now).toISOString(),
    cycles,
    hiddenColumns,
    hiddenColumnTypes,
    expiresAt,
    allowedAddresses,
  };
  const entry = { organizationId: organization.id, actor, target: key.id, keyId: key.id };
  const createdAt = key.createdAt;
  const rowSlice = await withRecordedAction(
    slice === null ? db : longDb,
    async (trx) => {
      const found =
        slice === null ? null : await sliceFor(trx, dialectOf(trx), organization, slice, createdAt);
      await insertApiKey(trx, { ...key, rowSliceId: found?.id ?? null });
      return found;
    },
    (found) => ({
      ...entry,
      action: 'key.created',
      // What the key may read, as keys list shows it.
      details: {
        cycles,
        hiddenColumns,
        hiddenColumnTypes,
        expiresAt,
        allowedAddresses,
        ...(found && { rows: found.description }),
      },
      at: new Date(now),
    }),
  );
  return {
    id: key.id,
    key: secret,
    org: organization.slug,
    name,
    createdAt: key.createdAt,
    cycles,
    hiddenColumns,
    hiddenColumnTypes,
    expiresAt,
    allowedAddresses,
    rowSlice:
      rowSlice === null
        ? null
        : { ...rowSlice, employees: await countSliceEmployees(db, rowSlice.id, cycles) },
  };
}

export interface RolledApiKey {
  id: string;
  /** The new secret. Shown once; only its hash is kept. */
  key: string;
  org: string;
  name: string;
  /** What the key may read and until when, unchanged by the roll. */
  cycles: string[] | null;
  hiddenColumns: string[];
  hiddenColumnTypes: string[];
  expiresAt: string | null;
  allowedAddresses: string[] | null;
  rowSlice: RowSlice | null;
  /** Until when the secret the key had keeps working. */
  previousSecretExpiresAt: string;
}

/**
 * Gives a key a new secret with the same id, name and scope (address allowlist included);
 * the secret it had keeps working for the grace (`24h` when not given, at most 30 days),
 * then gets 401. A secret from an earlier roll that is still in its grace stops at once.
 */
export async function rollApiKeyById(
  db: Db,
  id: string,
  grace: string | undefined,
  now: number = Date.now(),
  actor: Actor = CLI_ACTOR,
): Promise<RolledApiKey> {
  const graceMs = graceOf(grace);
  const key = await findApiKey(db, id);
  if (!key) throw new KeyManagementError(`No API key with id "${id}"`);
  if (key.revokedAt !== null) {
    throw new KeyManagementError(`API key ${id} is revoked: create a new key instead`);
  }
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) {
    throw new KeyManagementError(
      `API key ${id} expired at ${key.expiresAt}: create a new key instead`,
    );
  }
  const organization = await findOrganizationById(db, key.organizationId);
  if (!organization) throw new KeyManagementError(`No API key with id "${id}"`);
  const secret = generateSecret();
  const previousSecretExpiresAt = new Date(now + graceMs).toISOString();
  const entry = { organizationId: key.organizationId, actor, target: id, keyId: id };
  const rolled = await withRecordedAction(
    db,
    (trx) =>
      rollApiKeySecret(trx, id, {
        prefix: displayPrefix(secret),
        secretHash: hashSecret(secret),
        previousExpiresAt: previousSecretExpiresAt,
      }),
    (done) =>
      done
        ? {
            ...entry,
            action: 'key.rolled',
            details: { previousSecretExpiresAt },
            at: new Date(now),
          }
        : undefined,
  );
  // Revoked between the reading and the writing.
  if (!rolled) throw new KeyManagementError(`API key ${id} is revoked: create a new key instead`);
  return {
    id,
    key: secret,
    org: organization.slug,
    name: key.name,
    cycles: key.cycles,
    hiddenColumns: key.hiddenColumns,
    hiddenColumnTypes: key.hiddenColumnTypes,
    expiresAt: key.expiresAt,
    allowedAddresses: key.allowedAddresses,
    rowSlice: key.rowSlice,
    previousSecretExpiresAt,
  };
}

export async function listOrganizationApiKeys(db: Db, org: string): Promise<ApiKey[]> {
  const organization = await organizationOrFail(db, org);
  return listApiKeys(db, organization.id);
}

export async function revokeApiKeyById(
  db: Db,
  id: string,
  actor: Actor = CLI_ACTOR,
): Promise<ApiKey> {
  const key = await findApiKey(db, id);
  if (!key) throw new KeyManagementError(`No API key with id "${id}"`);
  // Revoking twice keeps the first time, and records the first time only.
  const entry = { organizationId: key.organizationId, actor, target: id, keyId: id };
  await withRecordedAction(
    db,
    (trx) => revokeApiKey(trx, id, new Date().toISOString()),
    (revoked) => (revoked ? { ...entry, action: 'key.revoked' } : undefined),
  );
  return (await findApiKey(db, id)) ?? key;
}
