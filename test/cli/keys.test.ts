// compplan keys create | list | revoke and orgs list | set (README.md),
// against a real `compplan serve` started on the same database.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeDataSet } from '../fixtures/data-sets.js';
import {
  type CliServer,
  dumpDatabase,
  runCli,
  startCliServer,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';
import { importDataSet } from '../helpers/set-up.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const KEY_ID = /^key_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = /^cpk_[0-9A-Za-z]{42}$/;

interface CreatedKey {
  id: string;
  key: string;
  org: string;
  name: string;
  createdAt: string;
}

interface ListedKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  lastUsedAddress: string | null;
  revoked: boolean;
  revokedAt: string | null;
  cycles: string[] | null;
  hiddenColumns: string[];
  hiddenColumnTypes: string[];
  expiresAt: string | null;
  expired: boolean;
  expiringSoon: boolean;
  previousSecretExpiresAt: string | null;
}

/** What keys list says of a key with no restriction, expiry or roll. */
const UNRESTRICTED = {
  cycles: null,
  hiddenColumns: [],
  hiddenColumnTypes: [],
  allowedAddresses: null,
  rowSlice: null,
  expiresAt: null,
  expired: false,
  expiringSoon: false,
  previousSecretExpiresAt: null,
};

describe('compplan keys and orgs', () => {
  let db: TempDatabase;
  let server: CliServer;
  /** Keys made by the tests below, in order: [0] by --json, [1] by the text form. */
  const created: CreatedKey[] = [];

  const ping = (key: string) => fetch(`${server.url}/ping`, { headers: { 'x-api-key': key } });

  beforeAll(async () => {
    db = tempDatabase();
    await importDataSet(db.url, acmeDataSet());
    server = await startCliServer([], { ...db.env, LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await server?.stop();
    await stopAllProcesses();
    db.remove();
  });

  it('orgs set --api-keys disabled is shown by orgs list, and keys create is then refused with exit 1 pointing to Roles & Permissions', async () => {
    const disabled = await runCli(['orgs', 'set', 'acme', '--api-keys', 'disabled'], {
      env: db.env,
    });
    expect(disabled).toEqual({
      code: 0,
      signal: null,
      stdout: 'API key generation is now disabled for acme.\n',
      stderr: '',
    });
    const listed = await runCli(['orgs', 'list', '--json'], { env: db.env });
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        slug: 'acme',
        name: 'Acme Corp',
        apiKeysEnabled: false,
        createdAt: expect.stringMatching(ISO_MS),
      },
    ]);

    const before = dumpDatabase(db.path);
    const refused = await runCli(['keys', 'create', '--org', 'acme', '--json'], { env: db.env });
    expect(refused).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr:
        'compplan: API keys are disabled for "acme": enable "Allow administrators to generate API keys" under Settings → Roles & Permissions (compplan orgs set acme --api-keys enabled)\n',
    });
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  it('orgs set --api-keys enabled is shown by orgs list (text)', async () => {
    const enabled = await runCli(['orgs', 'set', 'acme', '--api-keys', 'enabled'], {
      env: db.env,
    });
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toBe('API key generation is now enabled for acme.\n');
    const text = await runCli(['orgs', 'list'], { env: db.env });
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^SLUG +NAME +API KEYS +CREATED$/);
    expect(lines[1]).toMatch(/^acme +Acme Corp +enabled +\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  });

  it('keys create --json prints exactly one object {id,key,org,name,createdAt,cycles,hiddenColumns,hiddenColumnTypes,expiresAt,allowedAddresses,rowSlice}, and the key works against the running server', async () => {
    const result = await runCli(
      ['keys', 'create', '--org', 'acme', '--name', 'Looker export', '--json'],
      { env: db.env },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const key = JSON.parse(result.stdout) as CreatedKey;
    expect(Object.keys(key)).toEqual([
      'id',
      'key',
      'org',
      'name',
      'createdAt',
      'cycles',
      'hiddenColumns',
      'hiddenColumnTypes',
      'expiresAt',
      'allowedAddresses',
      'rowSlice',
    ]);
    expect(key).toEqual({
      id: expect.stringMatching(KEY_ID),
      key: expect.stringMatching(SECRET),
      org: 'acme',
      name: 'Looker export',
      createdAt: expect.stringMatching(ISO_MS),
      cycles: null,
      hiddenColumns: [],
      hiddenColumnTypes: [],
      expiresAt: null,
      allowedAddresses: null,
      rowSlice: null,
    });
    created.push(key);

    const response = await ping(key.key);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ message: 'pong' });
    const cycles = await fetch(`${server.url}/v1/compensationPlanning/meritCycles`, {
      headers: { 'x-api-key': key.key },
    });
    expect(cycles.status).toBe(200);
    expect(((await cycles.json()) as { data: unknown[] }).data).toHaveLength(6);
  });

  it('keys create (text) prints the secret once with a copy-it-now warning, under the default name "API key"', async () => {
    const result = await runCli(['keys', 'create', '--org', 'acme'], { env: db.env });
    expect(result.code).toBe(0);
    const match = /^Created API key (key_\S+) \("API key"\) for acme\.\n\n {2}(cpk_\S+)\n\n/.exec(
      result.stdout,
    );
    expect(match, result.stdout).not.toBeNull();
    const [, id = '', secret = ''] = match ?? [];
    expect(id).toMatch(KEY_ID);
    expect(secret).toMatch(SECRET);
    expect(result.stdout).toContain(
      'Copy it now: it is shown only this once and cannot be displayed again.',
    );
    created.push({ id, key: secret, org: 'acme', name: 'API key', createdAt: '' });
    expect((await ping(secret)).status).toBe(200);
  });

  it('keys create for an unknown organisation exits 1 with a one-line message', async () => {
    expect(await runCli(['keys', 'create', '--org', 'nope'], { env: db.env })).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: 'compplan: No organisation with slug "nope"\n',
    });
  });

  it('keys revoke ID: the running server answers 401 to that key within 5 seconds; other keys keep working', async () => {
    const [victim, survivor] = created;
    if (!victim || !survivor) throw new Error('the keys of the tests above are missing');
    // Both keys are known to (and cached by) the running server before the revocation.
    expect((await ping(victim.key)).status).toBe(200);
    expect((await ping(survivor.key)).status).toBe(200);

    const revoked = await runCli(['keys', 'revoke', victim.id], { env: db.env });
    const revokedAt = Date.now();
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toBe('');
    expect(revoked.stdout).toMatch(
      new RegExp(
        `^Revoked ${victim.id} \\("Looker export"\\) at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\. Requests with it get 401 within 5 seconds\\.\\n$`,
      ),
    );

    let status = 200;
    while (Date.now() - revokedAt < 5_000) {
      const response = await ping(victim.key);
      status = response.status;
      if (status === 401) {
        expect(await response.json()).toEqual({
          timestamp: expect.stringMatching(ISO_MS),
          path: '/ping',
          message: 'Missing or invalid API key',
          statusCode: 401,
        });
        break;
      }
      await sleep(250);
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
    expect((await ping(survivor.key)).status).toBe(200);
  });

  it('keys list shows id, name, non-secret prefix, scope, hidden columns, expiry, created, last use (time and address) and revoked state, and never a secret (text and --json)', async () => {
    // The server writes last-used times when it stops (or every 15 s while it runs).
    expect(await server.stop()).toEqual({ code: 0, signal: null, killed: false });
    const [victim, survivor] = created;
    if (!victim || !survivor) throw new Error('the keys of the tests above are missing');

    const json = await runCli(['keys', 'list', '--org', 'acme', '--json'], { env: db.env });
    const text = await runCli(['keys', 'list', '--org', 'acme'], { env: db.env });
    expect(json.code).toBe(0);
    expect(text.code).toBe(0);
    for (const { key } of created) {
      // Nothing past the 12-character display prefix ever appears.
      for (const output of [json.stdout, json.stderr, text.stdout, text.stderr]) {
        expect(output).not.toContain(key);
        expect(output).not.toContain(key.slice(12, 24));
        expect(output).not.toContain(key.slice(-12));
      }
    }

    const listed = JSON.parse(json.stdout) as ListedKey[];
    expect(listed).toEqual([
      {
        id: victim.id,
        name: 'Looker export',
        prefix: victim.key.slice(0, 12),
        createdAt: victim.createdAt,
        lastUsedAt: expect.stringMatching(ISO_MS),
        lastUsedAddress: '127.0.0.1',
        revoked: true,
        revokedAt: expect.stringMatching(ISO_MS),
        ...UNRESTRICTED,
      },
      {
        id: survivor.id,
        name: 'API key',
        prefix: survivor.key.slice(0, 12),
        createdAt: expect.stringMatching(ISO_MS),
        lastUsedAt: expect.stringMatching(ISO_MS),
        lastUsedAddress: '127.0.0.1',
        revoked: false,
        revokedAt: null,
        ...UNRESTRICTED,
      },
    ]);

    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^ID +NAME +PREFIX +CYCLES +HIDDEN COLUMNS +HIDDEN TYPES +ALLOWED IPS +ROWS +EXPIRES +CREATED +LAST USED +STATUS$/,
    );
    const stamp = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';
    expect(lines[1]).toMatch(
      new RegExp(
        `^${victim.id} +Looker export +${victim.key.slice(0, 12)}… +all +none +none +any +all +never +${stamp} +${stamp} from 127\\.0\\.0\\.1 +revoked ${stamp}$`,
      ),
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^${survivor.id} +API key +${survivor.key.slice(0, 12)}… +all +none +none +any +all +never +${stamp} +${stamp} from 127\\.0\\.0\\.1 +active$`,
      ),
    );
  });

  it('keys revoke with an unknown id exits 1 with a one-line message', async () => {
    const result = await runCli(['keys', 'revoke', 'key_00000000-0000-4000-8000-000000000000'], {
      env: db.env,
    });
    expect(result).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: 'compplan: No API key with id "key_00000000-0000-4000-8000-000000000000"\n',
    });
  });
});
