// Settings → Connections and Roles & Permissions over real HTTP (both dialects): who may
// generate, revoke and change the permission; what the pages show; tenant isolation;
// and that the pages live outside the API (no key, no 405 of the read-only API).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/repository.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { findOrganizationBySlug, setApiKeysEnabled } from '../../src/tenancy/organizations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { textOf, WebClient, webDataSet } from '../helpers/web-client.js';

const PASSWORD = 'a long enough password';

describe('web application settings', () => {
  let server: TestServer;
  let owner: WebClient;
  let admin: WebClient;

  const organization = async (slug = 'initech') => {
    const found = await findOrganizationBySlug(server.database.db, slug);
    if (!found) throw new Error(`no organisation ${slug}`);
    return found;
  };
  const keysOf = async (slug = 'initech') =>
    listApiKeys(server.database.db, (await organization(slug)).id);
  const setAllowed = async (allowed: boolean) =>
    setApiKeysEnabled(server.database.db, (await organization()).id, allowed);

  async function signedIn(email: string, role: 'owner' | 'admin', org = 'initech') {
    const user = await createUser(server.database.db, { org, email, role });
    const client = new WebClient(server.url);
    await client.signInFirstTime(email, user.oneTimePassword, PASSWORD);
    return client;
  }

  async function generate(client: WebClient, name: string) {
    const _csrf = await client.csrfToken('/app/settings/connections');
    return client.post('/app/settings/connections/keys', { _csrf, name });
  }

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [webDataSet('initech'), webDataSet('globex')],
    });
    owner = await signedIn('owner@initech.example', 'owner');
    admin = await signedIn('admin@initech.example', 'admin');
  });
  afterAll(() => server.close());

  it('generating a key answers 303 to Connections, which shows the secret once; the list then shows only its prefix', async () => {
    await setAllowed(true);
    const posted = await generate(admin, 'BI tool');
    expect(posted.status).toBe(303);
    expect(posted.location).toBe('/app/settings/connections');
    expect(posted.body).not.toMatch(/cpk_/);
    const response = await admin.get('/app/settings/connections');
    expect(response.status).toBe(200);
    const secret =
      /id="new-key-secret" class="secret" type="text" value="(cpk_[0-9A-Za-z]{42})"/.exec(
        response.body,
      )?.[1];
    expect(secret).toBeDefined();
    expect(textOf(response.body)).toContain(
      'Copy this key now. For your security it cannot be shown again',
    );
    const ping = await fetch(`${server.url}/ping`, { headers: { 'x-api-key': secret ?? '' } });
    expect(ping.status).toBe(200);

    const list = await admin.get('/app/settings/connections');
    expect(list.status).toBe(200);
    expect(list.body).not.toContain(secret);
    expect(list.body).toContain(`<code>${secret?.slice(0, 12)}…</code>`);
  });

  it('refuses to generate with the permission off, for an administrator and an owner alike (403), and creates nothing', async () => {
    await setAllowed(false);
    try {
      const before = await keysOf();
      for (const client of [admin, owner]) {
        const page = await client.get('/app/settings/connections');
        expect(page.body).toContain('<fieldset disabled aria-describedby="generate-blocked">');
        const response = await generate(client, 'not allowed');
        expect(response.status).toBe(403);
        expect(textOf(response.body)).toContain(
          'No API key was generated: the organisation does not allow generating API keys.',
        );
        expect(response.body).not.toMatch(/cpk_[0-9A-Za-z]{42}/);
      }
      expect(await keysOf()).toEqual(before);
    } finally {
      await setAllowed(true);
    }
  });

  it('refuses a key name that is empty or longer than 200 characters with 422', async () => {
    for (const name of ['', '   ', 'x'.repeat(201)]) {
      const response = await generate(owner, name);
      expect(response.status).toBe(422);
      expect(textOf(response.body)).toContain('A key name must have 1 to 200 characters');
    }
  });

  it('refuses merit cycles ticked under "Every merit cycle" with 422 and a message saying so, and generates nothing: a key is never wider than its maker meant', async () => {
    await setAllowed(true);
    const before = (await keysOf()).length;
    const [cycle] = await server.database.db
      .selectFrom('merit_cycles')
      .select('id')
      .where('organization_id', '=', (await organization()).id)
      .execute();
    const _csrf = await owner.csrfToken('/app/settings/connections');
    const response = await owner.post('/app/settings/connections/keys', {
      _csrf,
      name: 'Finance dashboard',
      scope: 'all',
      [`cycle:${cycle?.id}`]: 'on',
    });
    expect(response.status).toBe(422);
    expect(textOf(response.body)).toContain(
      'No API key was generated: merit cycles were ticked, but “Every merit cycle” was chosen. Choose “Only these” to restrict the key to the ticked cycles, or untick them.',
    );
    expect(response.body).toContain('value="Finance dashboard"');
    expect(response.body).not.toMatch(/cpk_[0-9A-Za-z]{42}/);
    expect((await keysOf()).length).toBe(before);

    // The same form with "Only these" makes a key that reads that cycle only.
    const _csrf2 = await owner.csrfToken('/app/settings/connections');
    const only = await owner.post('/app/settings/connections/keys', {
      _csrf: _csrf2,
      name: 'Finance dashboard',
      scope: 'some',
      [`cycle:${cycle?.id}`]: 'on',
    });
    expect(only.status).toBe(303);
    const made = (await keysOf()).find((key) => key.name === 'Finance dashboard');
    expect(made?.cycles).toEqual([cycle?.id]);
  });

  it('refuses a compressed form post (Content-Encoding: gzip) with 415, and creates nothing', async () => {
    const before = (await keysOf()).length;
    const _csrf = await owner.csrfToken('/app/settings/connections');
    const response = await owner.request('POST', '/app/settings/connections/keys', {
      form: { _csrf, name: 'Compressed' },
      gzip: true,
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(textOf(response.body)).toContain(
      'Form posts are read uncompressed only (this one came with Content-Encoding: gzip).',
    );
    expect((await keysOf()).length).toBe(before);
    // The same form, uncompressed, is taken.
    const plain = await generate(owner, 'Compressed');
    expect(plain.status).toBe(303);
    expect((await keysOf()).length).toBe(before + 1);
  });

  it('escapes what users typed: a key name with markup is shown as text', async () => {
    expect((await generate(owner, '<img src=x onerror=alert(1)> & "quotes"')).status).toBe(303);
    const response = await owner.get('/app/settings/connections');
    expect(response.body).not.toContain('<img src=x');
    expect(response.body).toContain(
      '<th scope="row">&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot; <span class="sub">',
    );
  });

  it('lets only an owner change "Allow administrators to generate API keys" (the setting `orgs set` changes)', async () => {
    const adminToken = await admin.csrfToken('/app/settings/roles');
    const refused = await admin.post('/app/settings/roles', { _csrf: adminToken });
    expect(refused.status).toBe(403);
    expect(textOf(refused.body)).toContain('Only an owner can change permissions.');
    expect((await organization()).apiKeysEnabled).toBe(true);

    const ownerToken = await owner.csrfToken('/app/settings/roles');
    const off = await owner.post('/app/settings/roles', { _csrf: ownerToken });
    expect(off.status).toBe(303);
    expect(off.location).toBe('/app/settings/roles?saved');
    expect((await organization()).apiKeysEnabled).toBe(false);
    const page = await owner.get('/app/settings/roles?saved');
    // Off means off for everyone: the service refuses owners too.
    expect(textOf(page.body)).toContain(
      'Saved: no one can generate API keys for Initech Corp, owners included. Keys already generated keep working until they are revoked.',
    );
    expect(textOf(page.body)).not.toContain('administrators may not');

    const on = await owner.post('/app/settings/roles', {
      _csrf: ownerToken,
      allowAdministratorsToGenerateApiKeys: 'on',
    });
    expect(on.status).toBe(303);
    expect((await organization()).apiKeysEnabled).toBe(true);
    expect(textOf((await owner.get('/app/settings/roles?saved')).body)).toContain(
      'Saved: owners and administrators can generate API keys.',
    );
    expect((await owner.get('/app/settings/roles')).body).toContain(
      'type="checkbox" role="switch" value="on" checked',
    );
  });

  it('revokes through a confirmation page; the key is then marked revoked', async () => {
    const created = await createApiKey(server.database.db, { org: 'initech', name: 'to revoke' });
    const confirm = await admin.get(`/app/settings/connections/keys/${created.id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(textOf(confirm.body)).toContain('Revoke “to revoke”?');
    expect((await keysOf()).find((key) => key.id === created.id)?.revokedAt).toBeNull();

    const _csrf = await admin.csrfToken(`/app/settings/connections/keys/${created.id}/revoke`);
    const revoked = await admin.post(`/app/settings/connections/keys/${created.id}/revoke`, {
      _csrf,
    });
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe(`/app/settings/connections?revoked=${created.id}`);
    expect((await keysOf()).find((key) => key.id === created.id)?.revokedAt).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );
  });

  it("answers 404 to another organisation's key, and leaves it alone", async () => {
    const theirs = await createApiKey(server.database.db, { org: 'globex', name: 'theirs' });
    const path = `/app/settings/connections/keys/${theirs.id}/revoke`;
    expect((await owner.get(path)).status).toBe(404);
    const _csrf = await owner.csrfToken('/app/settings/connections');
    expect((await owner.post(path, { _csrf })).status).toBe(404);
    expect((await keysOf('globex')).map((key) => key.revokedAt)).toEqual([null]);
    // The list shows only the user's own organisation's keys.
    expect((await owner.get('/app/settings/connections')).body).not.toContain('theirs');
  });

  it('serves its stylesheet and script from compplan itself, cacheable, with 304 for a known ETag', async () => {
    const page = await owner.get('/app/settings/connections');
    const assets = [...page.body.matchAll(/(?:href|src)="(\/app\/assets\/[^"]+)"/g)].map(
      (match) => match[1] ?? '',
    );
    expect(assets).toHaveLength(3);
    for (const path of assets) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const etag = response.headers.get('etag') ?? '';
      const again = await fetch(`${server.url}${path}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }
  });

  it('answers an unknown page with an HTML 404', async () => {
    const response = await owner.get('/app/settings/nothing-here');
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(textOf(response.body)).toContain('There is no page at this address.');
  });
});

describe('method-not-allowed covers only the read-only API', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
  });
  afterAll(() => server.close());

  it('still answers 405 with Allow: GET, HEAD to other methods on API paths', async () => {
    for (const [method, path] of [
      ['POST', '/ping'],
      ['DELETE', '/v1/compensationPlanning/meritCycles'],
      ['PUT', '/v1/compensationPlanning/meritCycles/mc_10000000-0000-4000-8000-000000000001'],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
    }
  });

  it('lets the web application POST to its forms, and gives its pages no 405', async () => {
    const client = new WebClient(server.url);
    const form = await client.post('/app/sign-in', {});
    expect(form.status).toBe(403);
    expect(form.headers.get('content-type')).toBe('text/html; charset=utf-8');
    for (const path of ['/app/settings/connections', '/app/sign-in']) {
      const response = await fetch(`${server.url}${path}`, { method: 'DELETE' });
      expect(response.status).toBe(404);
      expect(response.headers.get('allow')).toBeNull();
    }
  });

  it('serves the web pages without an API key and outside the API quota', async () => {
    const response = await fetch(`${server.url}/app/sign-in`);
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-policy')).toBeNull();
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
  });
});
