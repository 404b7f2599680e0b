// The deployment's secrets that migrations generate and store (migrations 0001 and
// 0011), the same on every instance: read here, as the bytes they encode.
import type { Db } from './connect.js';

export async function readServerSecret(db: Db, name: string): Promise<Buffer> {
  const row = await db
    .selectFrom('server_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}
