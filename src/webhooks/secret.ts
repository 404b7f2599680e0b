// An endpoint's signing secret: `whsec_` and 24 random bytes in base64, the form every
// Standard Webhooks library takes. It must be kept to sign (a hash would not do), so it
// is stored sealed under the server secret migration 0011 made; shown once when made.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { WEBHOOK_SECRET_KEY } from '../db/migrations/0011-webhooks.js';
import { readServerSecret } from '../db/server-secrets.js';
import { unseal } from '../sealed-text.js';

export function generateSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The key endpoint secrets are sealed under (the same on every instance). */
export const readSealingKey = (db: Db) => readServerSecret(db, WEBHOOK_SECRET_KEY);

export function unsealSecret(key: Buffer, sealed: string): string {
  const secret = unseal(key, sealed);
  if (secret === undefined) throw new Error('a webhook secret could not be unsealed');
  return secret;
}
