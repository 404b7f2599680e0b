// The audit log's entries of management actions done through the command line's
// services (actor `cli`): keys created, rolled and revoked, a setting changed, a user
// created, a webhook endpoint added and removed, an import with its counts, a merit cycle
// removed. Each in the transaction of its action: a refused action records nothing. No
// entry holds a secret or employee data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeApiKeysSetting } from '../../src/api-keys/organization-setting.js';
import {
  createApiKey,
  KeyManagementError,
  revokeApiKeyById,
  rollApiKeyById,
} from '../../src/api-keys/service.js';
import { CLI_ACTOR } from '../../src/audit/entry.js';
import { DEFAULT_CHANGE_RETENTION_DAYS } from '../../src/config.js';
import { removeMeritCycle } from '../../src/modules/merit-cycles/removal.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { addWebhookEndpoint, removeWebhookEndpointById } from '../../src/webhooks/service.js';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { auditEntriesOf } from './helpers.js';

describe('audit log: management actions', () => {
  let server: TestServer;
  const secrets: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({});
  });
  afterAll(async () => {
    await server?.close();
  });

  it('records each action with its actor, target and details, in order', async () => {
    const { db } = server.database;
    await server.load(acmeDataSet());
    const organization = await findOrganizationBySlug(db, ACME);
    const created = await createApiKey(db, {
      org: ACME,
      name: 'BI',
      hiddenColumns: ['tenure'],
      hiddenColumnTypes: ['composite', 'currency'],
    });
    const rolled = await rollApiKeyById(db, created.id, '1h');
    await revokeApiKeyById(db, created.id);
    // Revoking again changes nothing, and records nothing.
    await revokeApiKeyById(db, created.id);
    await changeApiKeysSetting(db, organization?.id ?? '', false, CLI_ACTOR);
    const user = await createUser(db, { org: ACME, email: 'owner@acme.example', role: 'owner' });
    const endpoint = await addWebhookEndpoint(db, {
      org: ACME,
      url: 'https://hooks.example.com/compplan',
      events: ['meritCycle.created'],
      allowPrivateNetworks: [],
    });
    await removeWebhookEndpointById(db, endpoint.id);
    await removeMeritCycle(server.database, CYCLE.lastYear, {
      changeRetentionDays: DEFAULT_CHANGE_RETENTION_DAYS,
    });
    secrets.push(created.key, rolled.key, user.oneTimePassword, endpoint.secret);

    const entries = await auditEntriesOf(db, ACME);
    expect(entries.map((entry) => [entry.action, entry.actor, entry.target])).toEqual([
      ['import', 'cli', null],
      ['key.created', 'cli', created.id],
      ['key.rolled', 'cli', created.id],
      ['key.revoked', 'cli', created.id],
      ['settings.changed', 'cli', null],
      ['user.created', 'cli', user.id],
      ['webhook.added', 'cli', endpoint.id],
      ['webhook.removed', 'cli', endpoint.id],
      ['cycle.removed', 'cli', CYCLE.lastYear],
    ]);
    const [imported, keyCreated, roll, , setting, userCreated, , , removed] = entries;
    // What the key may read, as keys list shows it.
    expect(keyCreated?.details).toEqual({
      cycles: null,
      hiddenColumns: ['tenure'],
      hiddenColumnTypes: ['composite', 'currency'],
      expiresAt: null,
      allowedAddresses: null,
    });
    expect(imported?.details).toEqual({
      organizationCreated: true,
      meritCycles: { created: 6, updated: 0, unchanged: 0 },
      employees: expect.objectContaining({ updated: 0, unchanged: 0, removed: 0 }),
      prune: false,
    });
    expect(roll?.details).toEqual({ previousSecretExpiresAt: rolled.previousSecretExpiresAt });
    expect(setting?.details).toEqual({ apiKeysEnabled: false });
    expect(userCreated?.details).toEqual({ email: 'owner@acme.example', role: 'owner' });
    expect(removed?.details).toMatchObject({ employees: expect.any(Number) });
    expect(entries.every((entry) => entry.clientAddress === null && entry.userId === null)).toBe(
      true,
    );
  });

  it('writes no secret and no employee data into the log', async () => {
    const text = JSON.stringify(await auditEntriesOf(server.database.db, ACME));
    for (const secret of secrets) expect(text).not.toContain(secret);
    for (const employee of acmeDataSet().meritCycles.flatMap((cycle) => cycle.employees ?? [])) {
      expect(text).not.toContain(employee.email);
      expect(text).not.toContain(employee.lastName);
    }
  });

  it('a refused action (a malformed address range) creates no key and records nothing', async () => {
    const { db } = server.database;
    await changeApiKeysSetting(
      db,
      (await findOrganizationBySlug(db, ACME))?.id ?? '',
      true,
      CLI_ACTOR,
    );
    const before = (await auditEntriesOf(db, ACME)).length;
    const keysBefore = await db.selectFrom('api_keys').select('id').execute();
    for (const ranges of [['10.0.0/8'], ['10.0.0.0/33'], ['::1/129'], ['127.1'], ['example.com']]) {
      await expect(
        createApiKey(db, { org: ACME, name: 'bad', allowedAddresses: ranges }),
      ).rejects.toThrow(
        new KeyManagementError(
          `--allow-ips: "${ranges[0]}" is not an IP address or CIDR range, such as 203.0.113.0/24, 198.51.100.7 or 2001:db8::/32`,
        ),
      );
    }
    expect(await db.selectFrom('api_keys').select('id').execute()).toEqual(keysBefore);
    // The setting changed (one entry); nothing more.
    expect(await auditEntriesOf(db, ACME)).toHaveLength(before);
  });
});
