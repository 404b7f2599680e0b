// Settings → Audit log over real HTTP (both databases): what the web application's
// actions record (the user and their address), who may read the log (owners; of their own
// organisation only), its filters, and its pages continued with a cursor. And the
// allowlist field of the generate form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/repository.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { auditEntriesOf } from '../audit/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { hiddenFieldsOf, textOf, WebClient, webDataSet } from '../helpers/web-client.js';

const PASSWORD = 'a long enough password';
const PAGE = '/app/settings/audit-log';
const rowsOf = (html: string) => html.match(/<th scope="row">/g)?.length ?? 0;

describe('Settings → Audit log', () => {
  let server: TestServer;
  let owner: WebClient;
  let admin: WebClient;
  let globexOwner: WebClient;
  let ownerId: string;
  let keyId: string;
  let secret: string;

  async function signedIn(email: string, role: 'owner' | 'admin', org = 'initech') {
    const user = await createUser(server.database.db, { org, email, role });
    const client = new WebClient(server.url);
    await client.signInFirstTime(email, user.oneTimePassword, PASSWORD);
    return { client, id: user.id };
  }
  const keysOf = async (slug: string) =>
    listApiKeys(
      server.database.db,
      (await findOrganizationBySlug(server.database.db, slug))?.id ?? '',
    );

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech'), webDataSet('globex')] });
    const signed = await signedIn('owner@initech.example', 'owner');
    owner = signed.client;
    ownerId = signed.id;
    admin = (await signedIn('admin@initech.example', 'admin')).client;
    globexOwner = (await signedIn('owner@globex.example', 'owner', 'globex')).client;
  });
  afterAll(() => server.close());

  it("records the web application's actions with the signed-in user and their address", async () => {
    const page = await owner.get('/app/settings/connections');
    const posted = await owner.post('/app/settings/connections/keys', {
      ...hiddenFieldsOf(page.body, '/app/settings/connections/keys'),
      name: 'Office BI',
      allowIps: '127.0.0.1, 10.0.0.0/8',
    });
    expect(posted.status).toBe(303);
    const shown = await owner.get('/app/settings/connections');
    secret = /value="(cpk_[0-9A-Za-z]{42})"/.exec(shown.body)?.[1] ?? '';
    expect(shown.body).toContain(
      '<span class="sub">Only from <code>127.0.0.1</code>, <code>10.0.0.0/8</code></span>',
    );
    const [key] = await keysOf('initech');
    keyId = key?.id ?? '';
    expect(key?.allowedAddresses).toEqual(['127.0.0.1', '10.0.0.0/8']);
    const wrong = await new WebClient(server.url).signIn('owner@initech.example', 'not it at all');
    expect(wrong.status).toBe(401);
    const roles = await owner.get('/app/settings/roles');
    expect(
      (
        await owner.post('/app/settings/roles', {
          ...hiddenFieldsOf(roles.body, '/app/settings/roles'),
          allowAdministratorsToGenerateApiKeys: 'on',
        })
      ).status,
    ).toBe(303);

    const entries = (await auditEntriesOf(server.database.db, 'initech')).filter(
      (entry) => entry.userId === ownerId,
    );
    expect(entries.map((entry) => [entry.action, entry.actor, entry.clientAddress])).toEqual([
      ['user.signed-in', 'owner@initech.example', '127.0.0.1'],
      ['key.created', 'owner@initech.example', '127.0.0.1'],
      ['user.sign-in-failed', 'owner@initech.example', '127.0.0.1'],
      ['settings.changed', 'owner@initech.example', '127.0.0.1'],
    ]);
    expect(entries[1]?.target).toBe(keyId);
    expect(JSON.stringify(entries)).not.toContain(secret);
  });

  it('shows an owner the entries newest first, requests by key name, actions by user', async () => {
    expect((await fetch(`${server.url}/ping`, { headers: { 'x-api-key': secret } })).status).toBe(
      200,
    );
    const page = await owner.get(PAGE);
    expect(page.status).toBe(200);
    const text = textOf(page.body);
    expect(text).toContain('Audit log');
    expect(page.body).toContain(
      '<a href="/app/settings/audit-log" aria-current="page">Audit log</a>',
    );
    const first = text.indexOf('API request');
    expect(first).toBeGreaterThan(-1);
    expect(text.indexOf('Key created')).toBeGreaterThan(first);
    expect(text).toContain('GET /ping');
    expect(text).toContain('Office BI');
    expect(text).toContain('owner@initech.example');
  });

  it('refuses an administrator (403, no entries, no link) and shows another organisation none of these entries', async () => {
    const refused = await admin.get(PAGE);
    expect(refused.status).toBe(403);
    expect(textOf(refused.body)).toContain(
      'Only an owner of the organisation can see its audit log.',
    );
    expect(refused.body).not.toContain('GET /ping');
    expect((await admin.get('/app/settings/connections')).body).not.toContain(PAGE);
    // Globex's owner, even asking for Initech's key by id, sees only Globex's entries.
    const other = await globexOwner.get(`${PAGE}?key=${keyId}`);
    expect(other.status).toBe(200);
    expect(other.body).not.toContain(keyId);
    expect(rowsOf(other.body)).toBe(0);
    const own = textOf((await globexOwner.get(PAGE)).body);
    expect(own).not.toContain('owner@initech.example');
    expect(own).toContain('owner@globex.example');
  });

  it('filters by key, user, action and date; refuses a filter that is not one (422)', async () => {
    const byKey = await owner.get(`${PAGE}?key=${keyId}`);
    expect(rowsOf(byKey.body)).toBe(2); // its request and its creation
    const byAction = await owner.get(`${PAGE}?action=user.sign-in-failed`);
    expect(rowsOf(byAction.body)).toBe(1);
    const byUser = await owner.get(`${PAGE}?user=${ownerId}`);
    expect(rowsOf(byUser.body)).toBe(4);
    const today = new Date().toISOString().slice(0, 10);
    expect(rowsOf((await owner.get(`${PAGE}?from=${today}&to=${today}`)).body)).toBeGreaterThan(4);
    expect(rowsOf((await owner.get(`${PAGE}?to=2000-01-01`)).body)).toBe(0);
    const badAction = await owner.get(`${PAGE}?action=everything`);
    expect(badAction.status).toBe(422);
    expect(textOf(badAction.body)).toContain('No audit log action "everything"');
    const badDate = await owner.get(`${PAGE}?from=last+week`);
    expect(badDate.status).toBe(422);
    expect(textOf(badDate.body)).toContain('From must be a date');
    expect((await owner.get(`${PAGE}?after=nonsense`)).status).toBe(422);
    // The cursor's shape, with a month that no calendar has.
    const badCursor = await owner.get(`${PAGE}?after=2026-13-01T00:00:00.000Z~5`);
    expect(badCursor.status).toBe(422);
    expect(textOf(badCursor.body)).toContain('The page link is not valid: start again');
    // The refusal is the page's answer: it does not also claim the log is empty.
    expect(textOf(badCursor.body)).not.toContain('No entries yet');
  });

  it('pages 50 entries at a time, newest first, older ones after the cursor, none twice', async () => {
    const open = await server.createKey('initech', 'pager');
    for (let n = 0; n < 60; n++) {
      await (await fetch(`${server.url}/ping`, { headers: { 'x-api-key': open } })).arrayBuffer();
    }
    const first = await owner.get(`${PAGE}?action=api.request`);
    expect(rowsOf(first.body)).toBe(50);
    const older = /href="\/app\/settings\/audit-log\?([^"]+)" rel="next"/.exec(first.body)?.[1];
    expect(older).toContain('action=api.request');
    const second = await owner.get(`${PAGE}?${older?.replaceAll('&amp;', '&')}`);
    expect(second.status).toBe(200);
    // 61 requests in all (60 and the one before).
    expect(rowsOf(second.body)).toBe(11);
    expect(second.body).not.toContain('rel="next"');
    expect(second.body).toContain('Newest entries');
    const times = (html: string) =>
      [...html.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]);
    const all = [...times(first.body), ...times(second.body)];
    expect([...all].sort().reverse()).toEqual(all);
  });

  it('refuses a malformed allowed address in the generate form (422), naming the field, and creates no key', async () => {
    const ids = async () => (await keysOf('initech')).map((key) => key.id);
    const before = await ids();
    const page = await owner.get('/app/settings/connections');
    const refused = await owner.post('/app/settings/connections/keys', {
      ...hiddenFieldsOf(page.body, '/app/settings/connections/keys'),
      name: 'Bad range',
      allowIps: '10.0.0.0/40',
    });
    expect(refused.status).toBe(422);
    expect(textOf(refused.body)).toContain(
      'Allowed addresses: "10.0.0.0/40" is not an IP address or CIDR range',
    );
    expect(await ids()).toEqual(before);
  });
});
