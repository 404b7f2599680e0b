// Key management: what `compplan keys …` (and later the web application's Settings →
// Connections) do. The secret exists in memory only until it is returned once.
import type { Db } from '../../db/connect.js';
import { newId } from '../../ids.js';
import { findOrganizationBySlug } from '../organizations/repository.js';
import { type ApiKey, findApiKey, insertApiKey, listApiKeys, revokeApiKey } from './repository.js';
import { displayPrefix, generateSecret, hashSecret } from './secret.js';

export class KeyManagementError extends Error {
  override name = 'KeyManagementError';
}

export interface CreatedApiKey {
  id: string;
  /** The secret. Shown once; only its hash is kept. */
  key: string;
  org: string;
  name: string;
  createdAt: string;
}

export const KEY_NAME_MAX_LENGTH = 200;

async function organizationOrFail(db: Db, slug: string) {
  const organization = await findOrganizationBySlug(db, slug);
  if (!organization) throw new KeyManagementError(`No organisation with slug "${slug}"`);
  return organization;
}

export async function createApiKey(
  db: Db,
  input: { org: string; name?: string | undefined },
): Promise<CreatedApiKey> {
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
  const secret = generateSecret();
  const key = {
    id: newId('key'),
    organizationId: organization.id,
    name,
    prefix: displayPrefix(secret),
    secretHash: hashSecret(secret),
    createdAt: new Date().toISOString(),
  };
  await insertApiKey(db, key);
  return { id: key.id, key: secret, org: organization.slug, name, createdAt: key.createdAt };
}

export async function listOrganizationApiKeys(db: Db, org: string): Promise<ApiKey[]> {
  const organization = await organizationOrFail(db, org);
  return listApiKeys(db, organization.id);
}

export async function revokeApiKeyById(db: Db, id: string): Promise<ApiKey> {
  const key = await findApiKey(db, id);
  if (!key) throw new KeyManagementError(`No API key with id "${id}"`);
  await revokeApiKey(db, id, new Date().toISOString());
  return (await findApiKey(db, id)) ?? key;
}
