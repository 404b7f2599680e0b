// Settings → Users over real HTTP (both dialects): owners add users (the one-time password
// shown once), change roles, reset passwords and remove users (their sessions end at once);
// administrators are refused; the last owner stays, even against two requests at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCredentials } from '../../src/users/repository.js';
import { changeUserRole, removeUser } from '../../src/users/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import {
  hiddenFieldsOf,
  signedInClient,
  textOf,
  WebClient,
  webDataSet,
} from '../helpers/web-client.js';

const PASSWORD = 'a long enough password';
const USERS = '/app/settings/users';
const ONE_TIME = /id="one-time-password" class="secret" type="text" value="([a-z2-9-]{23})"/;

describe('Settings → Users', () => {
  let server: TestServer;
  let owner: WebClient;

  const signedIn = (email: string, role: 'owner' | 'admin', org = 'initech') =>
    signedInClient(server, email, role, org);

  /** Posts the form of the users page (or of `page`) that posts to `action`. */
  async function postForm(
    client: WebClient,
    action: string,
    fields: Record<string, string> = {},
    page = USERS,
  ) {
    const shown = await client.get(page);
    return client.post(action, { ...hiddenFieldsOf(shown.body, action), ...fields });
  }

  const userId = async (email: string) =>
    (await findCredentials(server.database.db, email))?.user.id ?? '';

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [webDataSet('initech'), webDataSet('globex')],
    });
    owner = (await signedIn('owner@initech.example', 'owner')).client;
  });
  afterAll(() => server.close());

  it('lists the users with role and last sign-in; the one-time password of an added user is shown once, and signs them in', async () => {
    const page = await owner.get(USERS);
    expect(page.status).toBe(200);
    expect(textOf(page.body)).toMatch(
      /owner@initech\.example You Role .*Owner.* \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );

    const added = await postForm(owner, USERS, { email: 'new@initech.example', role: 'admin' });
    expect(added.status).toBe(303);
    expect(added.location).toBe(USERS);
    expect(added.body).not.toMatch(/[a-z2-9]{5}-[a-z2-9]{5}/);
    const shown = await owner.get(USERS);
    const password = ONE_TIME.exec(shown.body)?.[1] ?? '';
    expect(password).not.toBe('');
    expect(textOf(shown.body)).toContain('One-time password for new@initech.example');
    expect(textOf(shown.body)).toContain('No e-mail is sent');
    expect(textOf(shown.body)).toMatch(/new@initech\.example Role .*Administrator.* Never/);
    const again = await owner.get(USERS);
    expect(again.body).not.toContain(password);

    const newcomer = new WebClient(server.url);
    await newcomer.signInFirstTime('new@initech.example', password, PASSWORD);
    expect((await newcomer.get('/app/settings/connections')).status).toBe(200);
  });

  it('refuses an email in use or not an email (422), and adds nothing', async () => {
    const taken = await postForm(owner, USERS, { email: 'OWNER@initech.example', role: 'owner' });
    expect(taken.status).toBe(422);
    expect(textOf(taken.body)).toContain(
      'A user with the email OWNER@initech.example exists already',
    );
    const bad = await postForm(owner, USERS, { email: 'not-an-email', role: 'owner' });
    expect(bad.status).toBe(422);
    expect(textOf(bad.body)).toContain('"not-an-email" is not an email address');
    expect(await findCredentials(server.database.db, 'not-an-email')).toBeUndefined();
  });

  it('changes a role, said once with whose and which; the changed user sees it at their next page', async () => {
    const { client, id } = await signedIn('promoted@initech.example', 'admin');
    expect((await client.get(USERS)).status).toBe(403);
    const changed = await postForm(owner, `${USERS}/${id}/role`, { role: 'owner' });
    expect(changed.status).toBe(303);
    expect(changed.location).toBe(USERS);
    const page = await owner.get(USERS);
    expect(/<div class="notice notice-success"[^>]*>([^<]*)</.exec(page.body)?.[1]).toBe(
      'Role of promoted@initech.example changed to Owner.',
    );
    expect(textOf((await owner.get(USERS)).body)).not.toContain('changed to Owner');
    expect((await client.get(USERS)).status).toBe(200);
  });

  it('resets a password: the user is signed out at once, the old password stops working, the new one-time password is shown once', async () => {
    const { client, id } = await signedIn('forgot@initech.example', 'admin');
    const confirm = await owner.get(`${USERS}/${id}/reset`);
    expect(confirm.status).toBe(200);
    expect(textOf(confirm.body)).toContain('Give forgot@initech.example a new one-time password?');
    const reset = await postForm(owner, `${USERS}/${id}/reset`, {}, `${USERS}/${id}/reset`);
    expect(reset.status).toBe(303);
    const shown = await owner.get(USERS);
    const password = ONE_TIME.exec(shown.body)?.[1] ?? '';
    expect(textOf(shown.body)).toContain('New one-time password for forgot@initech.example');
    expect((await client.get('/app/settings/connections')).location).toBe('/app/sign-in');
    expect(
      (await new WebClient(server.url).signIn('forgot@initech.example', PASSWORD)).status,
    ).toBe(401);
    await new WebClient(server.url).signInFirstTime('forgot@initech.example', password, PASSWORD);
  });

  it('removes a user: their sessions end at once and they cannot sign in', async () => {
    const { client, id } = await signedIn('leaver@initech.example', 'admin');
    const confirm = await owner.get(`${USERS}/${id}/remove`);
    expect(textOf(confirm.body)).toContain('Remove leaver@initech.example?');
    const removed = await postForm(owner, `${USERS}/${id}/remove`, {}, `${USERS}/${id}/remove`);
    expect(removed.status).toBe(303);
    expect(removed.location).toBe(USERS);
    expect(textOf((await owner.get(USERS)).body)).toContain(
      'leaver@initech.example removed. Their sessions have ended.',
    );
    expect((await client.get('/app/settings/connections')).location).toBe('/app/sign-in');
    expect(
      (await new WebClient(server.url).signIn('leaver@initech.example', PASSWORD)).status,
    ).toBe(401);
    expect(await userId('leaver@initech.example')).toBe('');
  });

  it('the last owner can be neither removed nor made an administrator (422, nothing changed)', async () => {
    const { client: globex, id } = await signedIn('only@globex.example', 'owner', 'globex');
    const demoted = await postForm(globex, `${USERS}/${id}/role`, { role: 'admin' });
    expect(demoted.status).toBe(422);
    expect(textOf(demoted.body)).toContain('The last owner cannot be made an administrator');
    const removed = await postForm(globex, `${USERS}/${id}/remove`, {}, `${USERS}/${id}/remove`);
    expect(removed.status).toBe(422);
    expect(textOf(removed.body)).toContain('The last owner cannot be removed');
    expect((await globex.get(USERS)).status).toBe(200);
  });

  it('of two owners demoted or removed at the same time, one change is refused: an owner remains', async () => {
    const db = server.database.db;
    for (let round = 0; round < 5; round++) {
      const a = await createUser(db, {
        org: 'globex',
        email: `a${round}@globex.example`,
        role: 'owner',
      });
      const b = await createUser(db, {
        org: 'globex',
        email: `b${round}@globex.example`,
        role: 'owner',
      });
      // Only these two are owners of globex now.
      await removeUser(db, 'globex', { email: 'only@globex.example' }).catch(() => undefined);
      for (const user of await db
        .selectFrom('users')
        .select(['id', 'email'])
        .where('role', '=', 'owner')
        .execute()) {
        if (user.email.endsWith('@globex.example') && user.id !== a.id && user.id !== b.id) {
          await removeUser(db, 'globex', { id: user.id });
        }
      }
      const outcomes = await Promise.allSettled([
        changeUserRole(db, 'globex', { id: a.id }, 'admin'),
        round % 2 === 0
          ? removeUser(db, 'globex', { id: b.id })
          : changeUserRole(db, 'globex', { id: b.id }, 'admin'),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const owners = await db
        .selectFrom('users')
        .innerJoin('organizations', 'organizations.id', 'users.organization_id')
        .select('users.id')
        .where('organizations.slug', '=', 'globex')
        .where('users.role', '=', 'owner')
        .execute();
      expect(owners).toHaveLength(1);
    }
  });

  it('administrators see neither the page nor its link, and their posts change nothing (403)', async () => {
    const { client } = await signedIn('admin@initech.example', 'admin');
    const connections = await client.get('/app/settings/connections');
    expect(connections.body).not.toContain(`href="${USERS}"`);
    expect((await owner.get('/app/settings/connections')).body).toContain(`href="${USERS}"`);
    const ownerId = await userId('owner@initech.example');
    for (const path of [USERS, `${USERS}/${ownerId}/remove`, `${USERS}/${ownerId}/reset`]) {
      expect((await client.get(path)).status).toBe(403);
    }
    const form = hiddenFieldsOf(connections.body, '/app/sign-out');
    const posted = await client.post(USERS, {
      _csrf: form._csrf ?? '',
      email: 'x@initech.example',
      role: 'owner',
    });
    expect(posted.status).toBe(403);
    expect(await userId('x@initech.example')).toBe('');
    const removal = await client.post(`${USERS}/${ownerId}/remove`, { _csrf: form._csrf ?? '' });
    expect(removal.status).toBe(403);
    expect(await userId('owner@initech.example')).toBe(ownerId);
  });

  it('another organisation’s user is not found (404), and a post without the CSRF token is refused (403)', async () => {
    const other = await createUser(server.database.db, {
      org: 'globex',
      email: 'far@globex.example',
      role: 'admin',
    });
    expect((await owner.get(`${USERS}/${other.id}/remove`)).status).toBe(404);
    const page = await owner.get(USERS);
    const fields = hiddenFieldsOf(page.body, USERS);
    const forged = await owner.post(`${USERS}/${other.id}/remove`, { _csrf: fields._csrf ?? '' });
    expect(forged.status).toBe(404);
    expect(await userId('far@globex.example')).toBe(other.id);
    const tokenless = await owner.post(USERS, { email: 'y@initech.example', role: 'owner' });
    expect(tokenless.status).toBe(403);
    expect(await userId('y@initech.example')).toBe('');
  });
});
