// The web application's sign-in, first-sign-in password change, sessions, sign-out and
// CSRF protection, over real HTTP against the real app and database (both dialects).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDLE_MS } from '../../src/sessions/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { csrfTokenOf, textOf, WebClient, webDataSet } from '../helpers/web-client.js';

const PASSWORD = 'correct horse battery staple';

describe('web application sessions', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
  });
  afterAll(() => server.close());

  async function newUser(email: string, role: 'owner' | 'admin' = 'owner') {
    return createUser(server.database.db, { org: 'initech', email, role });
  }

  async function signedInClient(email: string) {
    const user = await newUser(email);
    const client = new WebClient(server.url);
    await client.signInFirstTime(email, user.oneTimePassword, PASSWORD);
    return client;
  }

  it('sends a visitor without a session from a settings page to the sign-in page (303)', async () => {
    const client = new WebClient(server.url);
    for (const path of ['/app/settings/connections', '/app/settings/roles', '/app/password']) {
      const response = await client.get(path);
      expect(response.status).toBe(303);
      expect(response.location).toBe('/app/sign-in');
    }
    expect((await client.get('/app')).location).toBe('/app/sign-in');
  });

  it('serves the sign-in page with the security headers and an httpOnly, SameSite=Strict form cookie', async () => {
    const response = await new WebClient(server.url).get('/app/sign-in');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
    );
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('strict-transport-security')).toBeNull();
    expect(response.setCookies).toHaveLength(1);
    expect(response.setCookies[0]).toMatch(
      /^compplan_sign_in=[A-Za-z0-9_-]{43}; Path=\/app; Max-Age=3600; HttpOnly; SameSite=Strict$/,
    );
    expect(response.body).toContain('<label for="email">Email</label>');
    expect(response.body).toContain('<label for="password">Password</label>');
    // Every asset is local: no other origin is named anywhere in the page.
    expect(response.body).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('refuses a wrong password with 401 and the same message as an unknown email', async () => {
    await newUser('wrong.password@initech.example');
    const wrongPassword = await new WebClient(server.url).signIn(
      'wrong.password@initech.example',
      'not the password',
    );
    const unknownEmail = await new WebClient(server.url).signIn(
      'nobody@initech.example',
      'not the password',
    );
    for (const response of [wrongPassword, unknownEmail]) {
      expect(response.status).toBe(401);
      expect(response.body).toContain('The email or the password is not right.');
      expect(response.setCookies.some((line) => line.startsWith('compplan_session='))).toBe(false);
    }
  });

  it('signs in with the one-time password into a session that can only choose a new password', async () => {
    const user = await newUser('first@initech.example');
    const client = new WebClient(server.url);
    // Emails are matched case-insensitively.
    const signedIn = await client.signIn('FIRST@initech.example', user.oneTimePassword);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/app/password');
    const sessionCookie = signedIn.setCookies.find((line) => line.startsWith('compplan_session='));
    expect(sessionCookie).toMatch(
      /^compplan_session=[A-Za-z0-9_-]{43}; Path=\/app; Max-Age=43200; HttpOnly; SameSite=Lax$/,
    );
    // The database keeps only a hash of the session id.
    const sessionId = client.cookies.get('compplan_session') ?? '';
    const rows = await server.database.db.selectFrom('sessions').select('id_hash').execute();
    expect(rows.map((row) => row.id_hash)).not.toContain(sessionId);
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.id_hash))).toBe(true);

    const connections = await client.get('/app/settings/connections');
    expect(connections.status).toBe(303);
    expect(connections.location).toBe('/app/password');
    const _csrf = await client.csrfToken('/app/password');
    const generate = await client.post('/app/settings/connections/keys', { _csrf, name: 'early' });
    expect(generate.status).toBe(403);
    expect(textOf(generate.body)).toContain('Choose your own password to continue.');
  });

  it('refuses a new password that is short, mismatched or the one-time password, with 422', async () => {
    const user = await newUser('rules@initech.example');
    const client = new WebClient(server.url);
    await client.signIn('rules@initech.example', user.oneTimePassword);
    const _csrf = await client.csrfToken('/app/password');
    const cases: [Record<string, string>, string][] = [
      [{ password: 'short', confirmation: 'short' }, 'Use at least 12 characters.'],
      [
        { password: 'long enough password', confirmation: 'long enough passw0rd' },
        'The two passwords do not match.',
      ],
      [
        { password: user.oneTimePassword, confirmation: user.oneTimePassword },
        'Choose a password of your own, not the one-time password.',
      ],
    ];
    for (const [form, message] of cases) {
      const response = await client.post('/app/password', { _csrf, ...form });
      expect(response.status).toBe(422);
      expect(textOf(response.body)).toContain(message);
    }
  });

  it('after the password change: a new session id, the old session and the one-time password stop working, the new password signs in', async () => {
    const user = await newUser('change@initech.example');
    const client = new WebClient(server.url);
    await client.signIn('change@initech.example', user.oneTimePassword);
    const firstSession = client.cookies.get('compplan_session');
    const _csrf = await client.csrfToken('/app/password');
    const chosen = await client.post('/app/password', {
      _csrf,
      password: PASSWORD,
      confirmation: PASSWORD,
    });
    expect(chosen.status).toBe(303);
    expect(chosen.location).toBe('/app/settings/connections');
    const secondSession = client.cookies.get('compplan_session');
    expect(secondSession).not.toBe(firstSession);
    expect((await client.get('/app/settings/connections')).status).toBe(200);

    const stale = new WebClient(server.url);
    stale.cookies.set('compplan_session', firstSession ?? '');
    expect((await stale.get('/app/settings/connections')).location).toBe('/app/sign-in');

    expect((await new WebClient(server.url).signIn(user.email, user.oneTimePassword)).status).toBe(
      401,
    );
    const again = await new WebClient(server.url).signIn(user.email, PASSWORD);
    expect(again.status).toBe(303);
    expect(again.location).toBe('/app/settings/connections');
  });

  it('signs out only with the CSRF token; the session then no longer works', async () => {
    const client = await signedInClient('signout@initech.example');
    const sessionId = client.cookies.get('compplan_session') ?? '';

    const forged = await client.post('/app/sign-out', {});
    expect(forged.status).toBe(403);
    expect((await client.get('/app/settings/connections')).status).toBe(200);

    const _csrf = await client.csrfToken('/app/settings/connections');
    const signedOut = await client.post('/app/sign-out', { _csrf });
    expect(signedOut.status).toBe(303);
    expect(signedOut.location).toBe('/app/sign-in?signedOut');
    expect(signedOut.setCookies).toEqual([
      'compplan_session=; Path=/app; Max-Age=0; HttpOnly; SameSite=Lax',
    ]);
    const replay = new WebClient(server.url);
    replay.cookies.set('compplan_session', sessionId);
    expect((await replay.get('/app/settings/connections')).location).toBe('/app/sign-in');
  });

  it('refuses form posts without the session CSRF token, with another token, or sent cross-site (403), and changes nothing', async () => {
    const client = await signedInClient('csrf@initech.example');
    const other = await signedInClient('csrf.other@initech.example');
    const _csrf = await client.csrfToken('/app/settings/connections');
    const otherToken = await other.csrfToken('/app/settings/connections');
    const keysBefore = await server.database.db.selectFrom('api_keys').select('id').execute();

    const attempts = [
      client.post('/app/settings/connections/keys', { name: 'no token' }),
      client.post('/app/settings/connections/keys', { _csrf: otherToken, name: 'other token' }),
      client.post('/app/settings/connections/keys', { _csrf: '', name: 'empty token' }),
      client.post(
        '/app/settings/connections/keys',
        { _csrf, name: 'cross-site' },
        { 'sec-fetch-site': 'cross-site' },
      ),
      client.post('/app/settings/roles', { allowAdministratorsToGenerateApiKeys: 'off' }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(403);
      expect(textOf(response.body)).toContain('This form has expired');
    }
    expect(await server.database.db.selectFrom('api_keys').select('id').execute()).toEqual(
      keysBefore,
    );

    const allowed = await client.post('/app/settings/connections/keys', { _csrf, name: 'ok' });
    expect(allowed.status).toBe(303);
  });

  it('refuses a sign-in post without the sign-in form cookie (login CSRF) with 403', async () => {
    const user = await newUser('login.csrf@initech.example');
    const client = new WebClient(server.url);
    const page = await client.get('/app/sign-in');
    const token = csrfTokenOf(page.body);
    client.cookies.delete('compplan_sign_in');
    const response = await client.post('/app/sign-in', {
      _csrf: token,
      email: user.email,
      password: user.oneTimePassword,
    });
    expect(response.status).toBe(403);
    expect(textOf(response.body)).toContain('The sign-in form had expired. Please sign in again.');
    expect(client.cookies.has('compplan_session')).toBe(false);
  });

  it('ends a session that has been idle for longer than two hours', async () => {
    const client = await signedInClient('idle@initech.example');
    const user = await server.database.db
      .selectFrom('users')
      .select('id')
      .where('email_key', '=', 'idle@initech.example')
      .executeTakeFirstOrThrow();
    const longAgo = new Date(Date.now() - SESSION_IDLE_MS - 1_000).toISOString();
    await server.database.db
      .updateTable('sessions')
      .set({ last_seen_at: longAgo })
      .where('user_id', '=', user.id)
      .execute();
    const response = await client.get('/app/settings/connections');
    expect(response.status).toBe(303);
    expect(response.location).toBe('/app/sign-in');
    const left = await server.database.db
      .selectFrom('sessions')
      .select('id_hash')
      .where('user_id', '=', user.id)
      .execute();
    expect(left).toEqual([]);
  });
});

describe('web application cookies behind a TLS-terminating proxy', () => {
  it('marks cookies Secure (and sends HSTS) for X-Forwarded-Proto: https only from a proxy named in TRUST_PROXY', async () => {
    const untrusting = await startTestServer({ dataSets: [webDataSet('initech')] });
    const trusting = await startTestServer({
      dataSets: [webDataSet('initech')],
      trustProxy: ['127.0.0.1'],
    });
    try {
      const proxied = { 'x-forwarded-proto': 'https' };
      const ignored = await new WebClient(untrusting.url).get('/app/sign-in', proxied);
      expect(ignored.setCookies[0]).not.toContain('Secure');
      expect(ignored.headers.get('strict-transport-security')).toBeNull();

      const believed = await new WebClient(trusting.url).get('/app/sign-in', proxied);
      expect(believed.setCookies[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
      expect(believed.headers.get('strict-transport-security')).toBe('max-age=31536000');

      const plain = await new WebClient(trusting.url).get('/app/sign-in');
      expect(plain.setCookies[0]).not.toContain('Secure');
    } finally {
      await untrusting.close();
      await trusting.close();
    }
  });
});
