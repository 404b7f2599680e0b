import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeysRevision } from '../../src/api-keys/repository.js';
import { listOrganizationApiKeys, revokeApiKeyById } from '../../src/api-keys/service.js';
import { UNCONFIRMED_MS } from '../../src/api-keys/verifier.js';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { withWrongChecksum } from '../helpers/api-expectations.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const UNAUTHORIZED = 'Missing or invalid API key';

async function keyId(server: TestServer, secret: string): Promise<string> {
  const keys = await listOrganizationApiKeys(server.database.db, ACME);
  const key = keys.find((k) => secret.startsWith(k.prefix));
  if (!key) throw new Error('key not found');
  return key.id;
}

/**
 * Milliseconds from the start of `change` until the server answers 401 to `secret`, asked
 * every 100 ms for at most 6 s; fails the test if it never does.
 */
async function msUntilRefused(
  server: TestServer,
  secret: string,
  change: () => Promise<unknown>,
): Promise<number> {
  expect((await server.request('/ping', { key: secret })).status).toBe(200);
  const started = Date.now();
  await change();
  let status = 200;
  while (status === 200 && Date.now() - started < 6_000) {
    status = (await server.request('/ping', { key: secret })).status;
    if (status === 200) await sleep(100);
  }
  expect(status).toBe(401);
  return Date.now() - started;
}

describe('x-api-key authentication', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  it('refuses a missing, empty, malformed, mis-checksummed or unknown key alike: 401 and one message', async () => {
    const candidates: (string | null)[] = [
      null,
      '',
      'not-a-key',
      `Bearer ${key}`,
      withWrongChecksum(key),
      'cpk_000000000000000000000000000000000000000000', // right shape, wrong checksum
    ];
    for (const candidate of candidates) {
      const response = await server.request('/v1/compensationPlanning/meritCycles', {
        key: candidate,
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        timestamp: expect.any(String),
        path: '/v1/compensationPlanning/meritCycles',
        message: UNAUTHORIZED,
        statusCode: 401,
      });
    }
  });

  it('refuses a well-formed key that was never issued with the same 401', async () => {
    const other = await startTestServer({ dataSets: [acmeDataSet()] });
    try {
      const foreign = await other.createKey(ACME);
      const response = await server.request('/ping', { key: foreign });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { message: string }).message).toBe(UNAUTHORIZED);
    } finally {
      await other.close();
    }
  });

  it('refuses a revoked key within 5 seconds, although it was cached as valid', async () => {
    const secret = await server.createKey(ACME, 'to revoke');
    const id = await keyId(server, secret);
    const ms = await msUntilRefused(server, secret, () => revokeApiKeyById(server.database.db, id));
    expect(ms).toBeLessThan(5_000);
  });

  // The answers kept are confirmed once a second (verifier.ts): a revocation is seen at
  // the next confirmation, well before the 4 s an unconfirmed answer may be used.
  it('refuses a key revoked by SQL typed by hand within 2.5 seconds (the next confirmation), not only by the command', async () => {
    const secret = await server.createKey(ACME, 'revoked by hand');
    const id = await keyId(server, secret);
    const ms = await msUntilRefused(server, secret, () =>
      server.database.db
        .updateTable('api_keys')
        .set({ revoked_at: new Date().toISOString() })
        .where('id', '=', id)
        .execute(),
    );
    expect(ms).toBeLessThan(2_500);
  });

  it('refuses a key deleted from the database within 2.5 seconds', async () => {
    const secret = await server.createKey(ACME, 'deleted by hand');
    const id = await keyId(server, secret);
    const ms = await msUntilRefused(server, secret, () =>
      server.database.db.deleteFrom('api_keys').where('id', '=', id).execute(),
    );
    expect(ms).toBeLessThan(2_500);
  });

  describe('on a clock the test moves', () => {
    // The verifier's window is measured with this clock: five seconds pass in an instant.
    // Its timers are stopped: the test confirms (what the timer does each second) where it
    // means to, and nowhere else, as when the database does not answer.
    const clock = new TestClock();
    let timed: TestServer;
    beforeAll(async () => {
      timed = await startTestServer({ dataSets: [acmeDataSet()], monotonic: clock.now });
      await timed.app.apiKeys.close();
    });
    afterAll(() => timed.close());
    const lookups = async () =>
      ((await timed.app.metrics.apiKeyLookups.get()).values[0]?.value ?? 0) as number;

    it('looks a key up once, however long the pauses between its requests, while no key changes', async () => {
      const secret = await timed.createKey(ACME, 'used now and then');
      const before = await lookups();
      expect((await timed.request('/ping', { key: secret })).status).toBe(200);
      expect(await lookups()).toBe(before + 1);
      // Longer than an unconfirmed answer may be used (4 s): the confirmations keep it.
      for (let second = 0; second < 5; second++) {
        clock.advance(1_000);
        await timed.app.apiKeys.confirm();
      }
      expect((await timed.request('/ping', { key: secret })).status).toBe(200);
      expect((await timed.request('/ping', { key: secret })).status).toBe(200);
      expect(await lookups()).toBe(before + 1);
    });

    it('looks a key up again once its answer has gone 4 s unconfirmed (the database not answering), so that a revocation is seen within 5 s', async () => {
      const secret = await timed.createKey(ACME, 'unconfirmed');
      await timed.app.apiKeys.confirm();
      const before = await lookups();
      expect((await timed.request('/ping', { key: secret })).status).toBe(200);
      clock.advance(UNCONFIRMED_MS - 1);
      expect((await timed.request('/ping', { key: secret })).status).toBe(200);
      expect(await lookups()).toBe(before + 1);
      clock.advance(1);
      expect((await timed.request('/ping', { key: secret })).status).toBe(200);
      expect(await lookups()).toBe(before + 2);
    });
  });

  it('records when a key was last used, in batches rather than a write per request', async () => {
    const secret = await server.createKey(ACME, 'usage');
    const id = await keyId(server, secret);
    const before = Date.now();
    expect((await server.request('/ping', { key: secret })).status).toBe(200);
    const unflushed = await listOrganizationApiKeys(server.database.db, ACME);
    expect(unflushed.find((k) => k.id === id)?.lastUsedAt).toBeNull();

    await server.app.apiKeys.flushLastUsed();
    const flushed = await listOrganizationApiKeys(server.database.db, ACME);
    const lastUsed = Date.parse(flushed.find((k) => k.id === id)?.lastUsedAt ?? '');
    expect(lastUsed).toBeGreaterThanOrEqual(before - 1);
    expect(lastUsed).toBeLessThanOrEqual(Date.now());
  });

  it('records the last use of many keys in one flush, each its own time, and no other key', async () => {
    const secrets = await Promise.all(
      Array.from({ length: 3 }, (_, i) => server.createKey(ACME, `many ${i}`)),
    );
    const unused = await keyId(server, await server.createKey(ACME, 'unused'));
    const times: number[] = [];
    for (const secret of secrets) {
      expect((await server.request('/ping', { key: secret })).status).toBe(200);
      times.push(Date.now());
      await sleep(5);
    }
    await server.app.apiKeys.flushLastUsed();
    const keys = await listOrganizationApiKeys(server.database.db, ACME);
    const lastUsed = await Promise.all(
      secrets.map(async (secret) => {
        const id = await keyId(server, secret);
        return Date.parse(keys.find((k) => k.id === id)?.lastUsedAt ?? '');
      }),
    );
    // Each no later than the moment after its request, and in the order they were used.
    for (const [i, at] of lastUsed.entries()) expect(at).toBeLessThanOrEqual(times[i] as number);
    expect([...lastUsed].sort((a, b) => a - b)).toEqual(lastUsed);
    expect(new Set(lastUsed).size).toBe(3);
    expect(keys.find((k) => k.id === unused)?.lastUsedAt).toBeNull();
  });

  it('never writes a key, its hash or the header to the log', async () => {
    const secret = await server.createKey(ACME, 'logging');
    await server.request('/ping', { key: secret });
    await server.request('/nope', { key: secret });
    const text = JSON.stringify(server.logs);
    expect(server.logs.length).toBeGreaterThan(0);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(4, 20));
  });

  // Migration 0007: what moves the number each server reads once a second. Last: it
  // revokes and deletes, which makes every kept answer be looked up again.
  it('the keys revision moves when a key is revoked, its secret or organisation changed, or deleted; not when a key is created or used', async () => {
    const { db } = server.database;
    const revision = () => readKeysRevision(db);
    const secret = await server.createKey(ACME, 'watched');
    const id = await keyId(server, secret);
    const start = await revision();

    await server.createKey(ACME, 'another');
    expect((await server.request('/ping', { key: secret })).status).toBe(200);
    await server.app.apiKeys.flushLastUsed();
    await db.updateTable('api_keys').set({ name: 'renamed' }).where('id', '=', id).execute();
    expect(await revision()).toBe(start);

    await db
      .updateTable('api_keys')
      .set({ secret_hash: 'f'.repeat(64) })
      .where('id', '=', id)
      .execute();
    expect(await revision()).toBeGreaterThan(start);
    const afterSecret = await revision();
    await revokeApiKeyById(db, id);
    expect(await revision()).toBeGreaterThan(afterSecret);
    const afterRevoke = await revision();
    await db.deleteFrom('api_keys').where('id', '=', id).execute();
    expect(await revision()).toBeGreaterThan(afterRevoke);
  });
});

describe('failed-authentication throttling per client address', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  it('answers 429 after 20 failures in 10 s, yet still serves a valid key from that address', async () => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const response = await server.request('/ping', { key: `cpk_guess${attempt}` });
      expect(response.status).toBe(401);
    }
    const blocked = await server.request('/ping', { key: 'cpk_guess21' });
    expect(blocked.status).toBe(429);
    expect(await blocked.json()).toEqual({ message: 'Too Many Requests', statusCode: 429 });
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);

    const valid = await server.request('/ping', { key });
    expect(valid.status).toBe(200);
    expect(await valid.json()).toEqual({ message: 'pong' });
  });
});

describe('authentication comes before everything else', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
  });
  afterAll(() => server.close());

  it('answers 401, not 422 or 404, to a request without a key whatever its query or id', async () => {
    for (const path of [
      '/v1/compensationPlanning/meritCycles?limit=500&stauts=x',
      '/v1/compensationPlanning/meritCycles/not-an-id',
      '/v1/compensationPlanning/meritCycles/not-an-id/employees?limit=0',
    ]) {
      const response = await server.request(path, { key: null });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { message: string }).message).toBe(UNAUTHORIZED);
    }
  });
});

describe('HTTP Basic authentication with the key as password', () => {
  let server: TestServer;
  let key: string;
  const basic = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  it('accepts the key as the password with any user name, also an empty one, on every API route', async () => {
    const list = await server.request('/v1/compensationPlanning/meritCycles', {
      key: null,
      headers: { authorization: basic('', key) },
    });
    expect(list.status).toBe(200);
    const cycle = ((await list.json()) as { data: { id: string }[] }).data[0]?.id as string;
    for (const [user, path] of [
      ['analyst', '/ping'],
      ['', `/v1/compensationPlanning/meritCycles/${cycle}`],
      ['Power BI', `/v1/compensationPlanning/meritCycles/${cycle}/exchangeRates`],
      ['Tableau user', `/v1/compensationPlanning/meritCycles/${cycle}/employees`],
      ['u', '/v1/compensationPlanning/meritCycles/delta'],
    ] as const) {
      const response = await server.request(path, {
        key: null,
        headers: { authorization: basic(user, key) },
      });
      expect(response.status, `${user} ${path}`).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
    }
    // The scheme's name is case-insensitive (RFC 9110 section 11.1).
    const lower = await server.request('/ping', {
      key: null,
      headers: { authorization: basic('u', key).replace('Basic', 'basic') },
    });
    expect(lower.status).toBe(200);
  });

  it('answers every 401 with WWW-Authenticate: Basic realm="compplan", whatever was wrong', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: basic('u', 'not-a-key') },
      { authorization: basic('u', withWrongChecksum(key)) },
      { authorization: `Bearer ${key}` },
      { authorization: `Basic ${Buffer.from(key).toString('base64')}` }, // no colon
      { authorization: 'Basic !!!' },
      { 'x-api-key': 'not-a-key' },
    ];
    for (const headers of cases) {
      const response = await server.request('/v1/compensationPlanning/meritCycles', {
        key: null,
        headers,
      });
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="compplan"');
      expect(((await response.json()) as { message: string }).message).toBe(UNAUTHORIZED);
    }
  });

  it('accepts the key as the user name with an empty password, as curl -u KEY: sends it', async () => {
    for (const path of ['/ping', '/v1/compensationPlanning/meritCycles', '/odata/v4/MeritCycles']) {
      const response = await server.request(path, {
        key: null,
        headers: { authorization: basic(key, '') },
      });
      expect(response.status, path).toBe(200);
    }
  });

  it('says the key goes in the password field when the user name has its shape and the password is something else, valid key or not', async () => {
    const hint =
      'Missing or invalid API key: with HTTP Basic authentication the key goes in the password field (with any user name), not in the user name';
    // The same answer for a valid key, an invalid one of the key's shape, and a bare prefix:
    // it tells nothing about the key.
    for (const user of [key, withWrongChecksum(key), 'cpk_']) {
      for (const path of ['/v1/compensationPlanning/meritCycles', '/odata/v4/MeritCycles']) {
        const response = await server.request(path, {
          key: null,
          headers: { authorization: basic(user, 'password') },
        });
        expect(response.status, path).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="compplan"');
        const body = (await response.json()) as { message?: string; error?: { message: string } };
        expect(body.message ?? body.error?.message, path).toBe(hint);
      }
    }
    // A user name of another shape: the plain refusal.
    const other = await server.request('/ping', {
      key: null,
      headers: { authorization: basic('analyst', 'password') },
    });
    expect(((await other.json()) as { message: string }).message).toBe(UNAUTHORIZED);
    // A valid key as the password wins, whatever the user name.
    const both = await server.request('/ping', {
      key: null,
      headers: { authorization: basic(withWrongChecksum(key), key) },
    });
    expect(both.status).toBe(200);
  });

  it('reads x-api-key when both are sent: a bad header is not rescued by good Basic credentials', async () => {
    const response = await server.request('/ping', {
      key: 'not-a-key',
      headers: { authorization: basic('u', key) },
    });
    expect(response.status).toBe(401);
  });

  it('never takes a key from the URL: query parameters and user info are ignored', async () => {
    for (const query of [`x-api-key=${key}`, `apiKey=${key}`, `api_key=${key}`, `key=${key}`]) {
      const response = await server.request(`/ping?${query}`, { key: null });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="compplan"');
    }
  });

  it('never writes the Basic credentials to the log', async () => {
    const header = basic('someone', key);
    await server.request('/ping', { key: null, headers: { authorization: header } });
    const text = JSON.stringify(server.logs);
    expect(text).not.toContain(key);
    expect(text).not.toContain(header.slice(6));
  });

  it('asks nothing of the web application: its sign-in 401 carries no Basic challenge', async () => {
    const response = await fetch(`${server.url}/app/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=nobody%40example.com&password=wrong',
    });
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});
