// Key expiry and rotation (docs/api-keys.md), through a clock the servers compare
// expiry with: a test moves it by hand and never sleeps. After expiry, or after the grace
// of a rolled key's old secret, the secret gets exactly the 401 of an unknown key, on
// every instance at the same moment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeysRevision } from '../../src/api-keys/repository.js';
import {
  listOrganizationApiKeys,
  revokeApiKeyById,
  rollApiKeyById,
} from '../../src/api-keys/service.js';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UNKNOWN_KEY = 'cpk_000000000000000000000000000000000000000000';

async function keyIdOf(server: TestServer, secret: string): Promise<string> {
  const key = (await listOrganizationApiKeys(server.database.db, ACME)).find((k) =>
    secret.startsWith(k.prefix),
  );
  if (!key) throw new Error('key not found');
  return key.id;
}

/** Status, body without its timestamp, and header names: what a client could compare. */
async function answerTo(server: TestServer, key: string, path = '/ping') {
  const response = await server.request(path, { key });
  const { timestamp: _timestamp, ...body } = (await response.json()) as Record<string, unknown>;
  const names = [...response.headers.keys()].filter((name) => name !== 'content-length').sort();
  return { status: response.status, body, names };
}

describe('key expiry and rotation', () => {
  const clock = new TestClock();
  let server: TestServer;
  /** A second instance on the same database and clock. */
  let other: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()], now: clock.now });
    other = await startTestServer({ database: server.databaseConfig, now: clock.now });
  });
  afterAll(async () => {
    await other?.close();
    await server?.close();
  });

  it('a key used up to its expiry gets, from that instant on, exactly the 401 of an unknown key on every instance', async () => {
    const secret = await server.createKey(ACME, 'expires', { expiresIn: '2h' });
    for (const instance of [server, other]) {
      expect((await instance.request('/ping', { key: secret })).status).toBe(200);
    }
    clock.advance(2 * HOUR - 1);
    for (const instance of [server, other]) {
      expect((await instance.request('/ping', { key: secret })).status).toBe(200);
    }
    clock.advance(1);
    for (const instance of [server, other]) {
      for (const path of ['/ping', `/v1/compensationPlanning/meritCycles/${CYCLE.annual2025}`]) {
        const expired = await answerTo(instance, secret, path);
        const unknown = await answerTo(instance, UNKNOWN_KEY, path);
        expect(expired.status).toBe(401);
        expect(expired).toEqual(unknown);
      }
    }
  });

  it('--expires-at a date: the key works until the start of that day (UTC), then gets 401', async () => {
    const startOfTomorrow = new Date(clock.now() + DAY).toISOString().slice(0, 10);
    const secret = await server.createKey(ACME, 'until tomorrow', {
      expiresAt: startOfTomorrow,
    });
    const [listed] = (await listOrganizationApiKeys(server.database.db, ACME)).filter(
      (k) => k.name === 'until tomorrow',
    );
    expect(listed?.expiresAt).toBe(`${startOfTomorrow}T00:00:00.000Z`);
    clock.advance(Date.parse(`${startOfTomorrow}T00:00:00.000Z`) - clock.now() - 1);
    expect((await server.request('/ping', { key: secret })).status).toBe(200);
    clock.advance(1);
    expect((await server.request('/ping', { key: secret })).status).toBe(401);
  });

  it('a rolled key: the new secret works at once with the same id, name and scope; the old one through its grace, then 401 on every instance', async () => {
    const old = await server.createKey(ACME, 'dashboard', {
      cycles: [CYCLE.annual2025],
      hiddenColumns: ['department'],
      hiddenColumnTypes: ['number'],
    });
    const id = await keyIdOf(server, old);
    // Both instances know (and keep) the old secret before the roll.
    for (const instance of [server, other]) {
      expect((await instance.request('/ping', { key: old })).status).toBe(200);
    }
    const rolled = await rollApiKeyById(server.database.db, id, '24h', clock.now());
    expect(rolled).toEqual({
      id,
      key: expect.stringMatching(/^cpk_/),
      org: ACME,
      name: 'dashboard',
      // What it may read, unchanged by the roll.
      cycles: [CYCLE.annual2025],
      hiddenColumns: ['department'],
      hiddenColumnTypes: ['number'],
      expiresAt: null,
      allowedAddresses: null,
      rowSlice: null,
      previousSecretExpiresAt: new Date(clock.now() + DAY).toISOString(),
    });
    // The roll moved the keys revision; each instance confirms it (once a second on its own).
    for (const instance of [server, other]) await instance.app.apiKeys.confirm();

    const list = '/v1/compensationPlanning/meritCycles';
    for (const instance of [server, other]) {
      for (const secret of [old, rolled.key]) {
        const response = await instance.request(list, { key: secret });
        expect(response.status).toBe(200);
        const ids = ((await response.json()) as { data: { id: string }[] }).data.map((c) => c.id);
        expect(ids).toEqual([CYCLE.annual2025]);
      }
    }
    const [listed] = (await listOrganizationApiKeys(server.database.db, ACME)).filter(
      (k) => k.id === id,
    );
    expect(listed).toMatchObject({
      name: 'dashboard',
      prefix: rolled.key.slice(0, 12),
      cycles: [CYCLE.annual2025],
      hiddenColumns: ['department'],
      previousSecretExpiresAt: rolled.previousSecretExpiresAt,
    });

    clock.advance(DAY - 1);
    for (const instance of [server, other]) {
      expect((await instance.request('/ping', { key: old })).status).toBe(200);
    }
    clock.advance(1);
    for (const instance of [server, other]) {
      expect(await answerTo(instance, old)).toEqual(await answerTo(instance, UNKNOWN_KEY));
      expect((await instance.request('/ping', { key: rolled.key })).status).toBe(200);
    }
  });

  it('rolling again ends the previous old secret at once; revoking ends both secrets', async () => {
    const first = await server.createKey(ACME, 'rolled twice');
    const id = await keyIdOf(server, first);
    const second = (await rollApiKeyById(server.database.db, id, '7d', clock.now())).key;
    const third = (await rollApiKeyById(server.database.db, id, '1h', clock.now())).key;
    await server.app.apiKeys.confirm();
    expect((await server.request('/ping', { key: first })).status).toBe(401);
    expect((await server.request('/ping', { key: second })).status).toBe(200);
    expect((await server.request('/ping', { key: third })).status).toBe(200);

    await revokeApiKeyById(server.database.db, id);
    await server.app.apiKeys.confirm();
    expect((await server.request('/ping', { key: second })).status).toBe(401);
    expect((await server.request('/ping', { key: third })).status).toBe(401);
    await expect(rollApiKeyById(server.database.db, id, '1h', clock.now())).rejects.toThrow(
      `API key ${id} is revoked: create a new key instead`,
    );
  });

  it('an old secret never outlives the key: a grace past the expiry ends at the expiry', async () => {
    const old = await server.createKey(ACME, 'short-lived', { expiresIn: '1h' });
    const id = await keyIdOf(server, old);
    const rolled = (await rollApiKeyById(server.database.db, id, '24h', clock.now())).key;
    await server.app.apiKeys.confirm();
    expect((await server.request('/ping', { key: old })).status).toBe(200);
    clock.advance(HOUR);
    expect((await server.request('/ping', { key: old })).status).toBe(401);
    expect((await server.request('/ping', { key: rolled })).status).toBe(401);
  });

  // Migration 0009 widens 0007's trigger: every column a verified key carries.
  it('the keys revision moves when a key’s scope, hidden columns, expiry or old secret change; not when its last use is recorded', async () => {
    const { db } = server.database;
    const secret = await server.createKey(ACME, 'watched');
    const id = await keyIdOf(server, secret);
    let before = await readKeysRevision(db);
    expect((await server.request('/ping', { key: secret })).status).toBe(200);
    await server.app.apiKeys.flushLastUsed();
    expect(await readKeysRevision(db)).toBe(before);
    const changes = [
      { cycle_scope: JSON.stringify([CYCLE.midYear]) },
      { hidden_columns: JSON.stringify(['department']) },
      { expires_at: new Date(clock.now() + DAY).toISOString() },
      { previous_secret_hash: 'e'.repeat(64) },
      { previous_secret_expires_at: new Date(clock.now() + HOUR).toISOString() },
    ];
    for (const change of changes) {
      await db.updateTable('api_keys').set(change).where('id', '=', id).execute();
      const after = await readKeysRevision(db);
      expect(after, Object.keys(change).join()).toBeGreaterThan(before);
      before = after;
    }
  });
});

describe('last use of a key: time and client address', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The loopback client is the trusted proxy: X-Forwarded-For names the client.
    server = await startTestServer({ dataSets: [acmeDataSet()], trustProxy: ['127.0.0.1'] });
  });
  afterAll(() => server?.close());

  it('records the address the server resolves (TRUST_PROXY) with the time of the last request', async () => {
    const secret = await server.createKey(ACME, 'used');
    const before = Date.now();
    const response = await server.request('/ping', {
      key: secret,
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    expect(response.status).toBe(200);
    await server.app.apiKeys.flushLastUsed();
    const [listed] = (await listOrganizationApiKeys(server.database.db, ACME)).filter(
      (k) => k.name === 'used',
    );
    expect(listed?.lastUsedAddress).toBe('203.0.113.7');
    expect(Date.parse(listed?.lastUsedAt ?? '')).toBeGreaterThanOrEqual(before - 1);
  });
});
