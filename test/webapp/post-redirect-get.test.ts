// POST/redirect/GET in the web application (both dialects): a generated key's secret is
// shown once, on the page the redirect leads to, kept server-side (sealed) until then and
// never put in a URL; the same form sent again (same CSRF token, same form id) does
// nothing. The browser's view of it (generate, reload: one key) is in test/web.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/repository.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { hiddenFieldsOf, textOf, WebClient, webDataSet } from '../helpers/web-client.js';

const PASSWORD = 'a long enough password';
const GENERATE = '/app/settings/connections/keys';
const CONNECTIONS = '/app/settings/connections';
const SECRET_IN_PAGE =
  /id="new-key-secret" class="secret" type="text" value="(cpk_[0-9A-Za-z]{42})"/;
const RESENT_NOTICE =
  'That form had been sent already, so nothing more was done. What it did the first time stands.';

describe('web forms: POST/redirect/GET and forms sent twice', () => {
  let server: TestServer;
  let owner: WebClient;
  let ownerEmail = '';
  let users = 0;

  const keyNames = async () => {
    const organization = await findOrganizationBySlug(server.database.db, 'initech');
    return (await listApiKeys(server.database.db, organization?.id ?? '')).map((key) => key.name);
  };
  const apiKeysEnabled = async () =>
    (await findOrganizationBySlug(server.database.db, 'initech'))?.apiKeysEnabled;

  async function signedIn(email = `owner${++users}@initech.example`) {
    const user = await createUser(server.database.db, { org: 'initech', email, role: 'owner' });
    const client = new WebClient(server.url);
    await client.signInFirstTime(email, user.oneTimePassword, PASSWORD);
    return { client, email };
  }

  /** The generate form of the Connections page, filled in with `name`. */
  async function generateForm(client: WebClient, name: string): Promise<Record<string, string>> {
    const page = await client.get(CONNECTIONS);
    return { ...hiddenFieldsOf(page.body, GENERATE), name };
  }

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
    ({ client: owner, email: ownerEmail } = await signedIn());
  });
  afterAll(() => server.close());

  it('generating answers 303 to Connections (no secret in the URL); that page shows the secret once, and a reload does not', async () => {
    const form = await generateForm(owner, 'Shown once');
    expect(form._form).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const posted = await owner.post(GENERATE, form);
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(CONNECTIONS);
    expect(posted.body).not.toMatch(/cpk_/);

    const shown = await owner.get(CONNECTIONS);
    expect(shown.status).toBe(200);
    const secret = SECRET_IN_PAGE.exec(shown.body)?.[1] ?? '';
    expect(secret).toMatch(/^cpk_[0-9A-Za-z]{42}$/);
    expect(textOf(shown.body)).toContain(`curl -H "x-api-key: ${secret}" ${server.url}/ping`);
    const ping = await fetch(`${server.url}/ping`, { headers: { 'x-api-key': secret } });
    expect(ping.status).toBe(200);

    const reloaded = await owner.get(CONNECTIONS);
    expect(reloaded.status).toBe(200);
    expect(reloaded.body).not.toContain(secret.slice(12));
    expect(reloaded.body).toContain(`<code>${secret.slice(0, 12)}…</code>`);
    expect((await keyNames()).filter((name) => name === 'Shown once')).toHaveLength(1);
  });

  it('between the POST and its GET the secret is kept sealed: not in clear in the database, and not shown to another session of the same user', async () => {
    const other = new WebClient(server.url);
    expect((await other.signIn(ownerEmail, PASSWORD)).location).toBe(CONNECTIONS);

    expect((await owner.post(GENERATE, await generateForm(owner, 'Sealed'))).status).toBe(303);
    const { rows } = await sql<{ one_time_view: string | null }>`
      select one_time_view from sessions where one_time_view is not null`.execute(
      server.database.db,
    );
    expect(rows).toHaveLength(1);
    const sealed = rows[0]?.one_time_view ?? '';
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toMatch(/cpk_|Sealed/);

    const elsewhere = await other.get(CONNECTIONS);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body).not.toMatch(SECRET_IN_PAGE);

    const shown = await owner.get(CONNECTIONS);
    const secret = SECRET_IN_PAGE.exec(shown.body)?.[1] ?? '';
    expect(secret).toMatch(/^cpk_/);
    expect(sealed).not.toContain(secret.slice(4));
    const { rows: after } = await sql<{ n: number | string }>`
      select count(*) as n from sessions where one_time_view is not null`.execute(
      server.database.db,
    );
    expect(Number(after[0]?.n)).toBe(0);
  });

  it('the same generate form sent again, one after the other or at once, creates one key; the repeat lands on Connections with a notice and no secret', async () => {
    const form = await generateForm(owner, 'Sent twice');
    const first = await owner.post(GENERATE, form);
    expect(first).toMatchObject({ status: 303, location: CONNECTIONS });
    const again = await owner.post(GENERATE, form);
    expect(again).toMatchObject({ status: 303, location: `${CONNECTIONS}?resent` });
    const landing = await owner.get(`${CONNECTIONS}?resent`);
    expect(landing.status).toBe(200);
    expect(textOf(landing.body)).toContain(RESENT_NOTICE);
    // The secret waits for the page of the first post's redirect, which came second here:
    // it is shown once, whichever page comes first.
    expect(SECRET_IN_PAGE.test(landing.body)).toBe(true);
    expect(SECRET_IN_PAGE.test((await owner.get(CONNECTIONS)).body)).toBe(false);
    expect((await keyNames()).filter((name) => name === 'Sent twice')).toHaveLength(1);

    const doubleClick = await generateForm(owner, 'Double click');
    const answers = await Promise.all([
      owner.post(GENERATE, doubleClick),
      owner.post(GENERATE, doubleClick),
    ]);
    expect(answers.map((answer) => answer.location).sort()).toEqual([
      CONNECTIONS,
      `${CONNECTIONS}?resent`,
    ]);
    expect((await keyNames()).filter((name) => name === 'Double click')).toHaveLength(1);
  });

  it('a permissions form sent again does not undo a later change', async () => {
    const roles = (await owner.get('/app/settings/roles')).body;
    const turnOff = hiddenFieldsOf(roles, '/app/settings/roles');
    const turnOn = {
      ...hiddenFieldsOf((await owner.get('/app/settings/roles')).body, '/app/settings/roles'),
      allowAdministratorsToGenerateApiKeys: 'on',
    };
    expect(await owner.post('/app/settings/roles', turnOff)).toMatchObject({ status: 303 });
    expect(await apiKeysEnabled()).toBe(false);
    expect(await owner.post('/app/settings/roles', turnOn)).toMatchObject({ status: 303 });
    expect(await apiKeysEnabled()).toBe(true);
    const replayed = await owner.post('/app/settings/roles', turnOff);
    expect(replayed).toMatchObject({ status: 303, location: '/app/settings/roles?resent' });
    expect(await apiKeysEnabled()).toBe(true);
    expect(textOf((await owner.get('/app/settings/roles?resent')).body)).toContain(RESENT_NOTICE);
  });

  it('a revoke form sent again does nothing more, and a malformed form id is refused (403) and creates nothing', async () => {
    expect((await owner.post(GENERATE, await generateForm(owner, 'Revoked once'))).status).toBe(
      303,
    );
    const organization = await findOrganizationBySlug(server.database.db, 'initech');
    const key = (await listApiKeys(server.database.db, organization?.id ?? '')).find(
      (candidate) => candidate.name === 'Revoked once',
    );
    const path = `${CONNECTIONS}/keys/${key?.id}/revoke`;
    const form = hiddenFieldsOf((await owner.get(path)).body, path);
    expect(await owner.post(path, form)).toMatchObject({
      status: 303,
      location: `${CONNECTIONS}?revoked=${key?.id}`,
    });
    expect(await owner.post(path, form)).toMatchObject({
      status: 303,
      location: `${CONNECTIONS}?resent`,
    });

    const before = await keyNames();
    const malformed = await owner.post(GENERATE, {
      ...(await generateForm(owner, 'Malformed')),
      _form: 'not-a-form-id',
    });
    expect(malformed.status).toBe(403);
    expect(textOf(malformed.body)).toContain('This form has expired');
    expect(await keyNames()).toEqual(before);
  });
});
