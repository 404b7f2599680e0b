// The key verifier's cache (src/modules/api-keys/verifier.ts) on a real SQLite database and
// a clock the test moves: the keys in use are confirmed together, so that a key in use is
// never looked up on its own after its first request; a revocation is seen at the next
// confirmation round; a key idle for longer than CONFIRM_WHILE_USED_MS is no longer
// confirmed, and its answer expires CACHE_TTL_MS after the last round.
import type { KyselyPlugin } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { importDataSet } from '../../src/import/load.js';
import { createApiKey, revokeApiKeyById } from '../../src/modules/api-keys/service.js';
import {
  ApiKeyVerifier,
  CACHE_TTL_MS,
  CONFIRM_EVERY_MS,
  CONFIRM_WHILE_USED_MS,
} from '../../src/modules/api-keys/verifier.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

/** Counts the statements that read api_keys: one key's lookups, and rounds of many. */
function countingReads() {
  const reads = { single: 0, batch: 0 };
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      const text = JSON.stringify(node);
      if (node.kind === 'SelectQueryNode' && text.includes('"api_keys"')) {
        if (text.includes('"operator":"in"')) reads.batch++;
        else reads.single++;
      }
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { reads, plugin };
}

describe('ApiKeyVerifier', () => {
  let testDatabase: TestDatabase | undefined;
  let database: DatabaseHandle | undefined;
  let verifier: ApiKeyVerifier | undefined;
  const keys: { secret: string; id: string }[] = [];
  const clock = { time: 0, now: () => clock.time };
  const at = (ms: number) => {
    clock.time = 1_000_000 + ms;
  };
  const { reads, plugin } = countingReads();

  beforeEach(async () => {
    testDatabase = await createTestDatabase('sqlite');
    database = openDatabase(testDatabase.config);
    await migrateToLatest(database);
    await importDataSet(database, {
      organization: { slug: 'acme', name: 'Acme', apiKeysEnabled: true },
      meritCycles: [],
    });
    keys.length = 0;
    for (let i = 0; i < 3; i++) {
      const created = await createApiKey(database.db, { org: 'acme', name: `key ${i}` });
      keys.push({ secret: created.key, id: created.id });
    }
    reads.single = 0;
    reads.batch = 0;
    at(0);
    verifier = new ApiKeyVerifier(database.db.withPlugin(plugin), 'sqlite', () => undefined, clock);
  });

  afterEach(async () => {
    await verifier?.close();
    await database?.db.destroy();
    await testDatabase?.drop();
  });

  const idOf = async (secret: string) => (await verifier?.verify(secret))?.id;

  it('looks a key up once, then confirms the keys in use together and renews their answers', async () => {
    for (const key of keys) expect(await idOf(key.secret)).toBe(key.id);
    expect(reads.single).toBe(3);

    // Rounds while the keys are in use: one statement for the three, and no key looked
    // up on its own again, long past the first answers' expiry.
    for (let round = 1; round <= 5; round++) {
      at(round * CONFIRM_EVERY_MS);
      await verifier?.confirmKeysInUse();
      for (const key of keys) expect(await idOf(key.secret)).toBe(key.id);
    }
    expect(5 * CONFIRM_EVERY_MS).toBeGreaterThan(CACHE_TTL_MS);
    expect(reads.single).toBe(3);
    expect(reads.batch).toBe(5);
  });

  it('refuses a key revoked since its answer from the next round on', async () => {
    const [key] = keys;
    if (!key || !database) throw new Error('no key');
    expect(await idOf(key.secret)).toBe(key.id);
    await revokeApiKeyById(database.db, key.id);
    at(CONFIRM_EVERY_MS);
    // Still the cached answer until the round (revocation is honoured within seconds, not
    // at once) …
    expect(await idOf(key.secret)).toBe(key.id);
    await verifier?.confirmKeysInUse();
    // … and refused from the round on, without a lookup of its own.
    expect(await verifier?.verify(key.secret)).toBeNull();
    expect(reads.single).toBe(1);
  });

  it('keeps confirming a key used in bursts, and stops once it has been idle for CONFIRM_WHILE_USED_MS', async () => {
    const [key] = keys;
    if (!key || !database) throw new Error('no key');
    expect(await idOf(key.secret)).toBe(key.id);
    // Idle, but used within the window: each round confirms it, and a burst long after
    // its first answer's expiry finds it answered.
    const rounds = Math.floor(CONFIRM_WHILE_USED_MS / CONFIRM_EVERY_MS) - 1;
    for (let round = 1; round <= rounds; round++) {
      at(round * CONFIRM_EVERY_MS);
      await verifier?.confirmKeysInUse();
    }
    expect(reads.batch).toBe(rounds);
    expect(await idOf(key.secret)).toBe(key.id);
    expect(reads.single).toBe(1);

    // Idle for the whole window: no longer confirmed, and its answer expires.
    const lastUse = rounds * CONFIRM_EVERY_MS;
    at(lastUse + CONFIRM_WHILE_USED_MS);
    await verifier?.confirmKeysInUse();
    expect(reads.batch).toBe(rounds);
    await revokeApiKeyById(database.db, key.id);
    at(lastUse + CONFIRM_WHILE_USED_MS + CACHE_TTL_MS);
    expect(await verifier?.verify(key.secret)).toBeNull();
    expect(reads.single).toBe(2);
  });
});
