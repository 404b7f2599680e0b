// Sign-in throttling: attempts are counted per account and per client address, before
// the password is checked, so that over the limit even the right password gets 429.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SIGN_IN_ATTEMPTS_PER_ACCOUNT,
  SIGN_IN_ATTEMPTS_PER_ADDRESS,
} from '../../src/web/pages/sign-in.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { textOf, WebClient, webDataSet } from '../helpers/web-client.js';

describe('sign-in throttling', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
  });
  afterEach(() => server.close());

  it(`after ${SIGN_IN_ATTEMPTS_PER_ACCOUNT} attempts on one account, the next is refused with 429 even with the right password; other accounts still sign in`, async () => {
    const victim = await createUser(server.database.db, {
      org: 'initech',
      email: 'victim@initech.example',
      role: 'owner',
    });
    const bystander = await createUser(server.database.db, {
      org: 'initech',
      email: 'bystander@initech.example',
      role: 'admin',
    });
    const client = new WebClient(server.url);
    for (let attempt = 0; attempt < SIGN_IN_ATTEMPTS_PER_ACCOUNT; attempt++) {
      expect((await client.signIn('Victim@initech.example', `guess ${attempt}`)).status).toBe(401);
    }
    const throttled = await client.signIn('victim@initech.example', victim.oneTimePassword);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(900);
    expect(textOf(throttled.body)).toContain('Too many sign-in attempts. Try again in 15 minutes.');
    expect(client.cookies.has('compplan_session')).toBe(false);

    const other = await new WebClient(server.url).signIn(
      'bystander@initech.example',
      bystander.oneTimePassword,
    );
    expect(other.status).toBe(303);
  });

  it(`after ${SIGN_IN_ATTEMPTS_PER_ADDRESS} attempts from one address on any accounts, the next is refused with 429`, async () => {
    const user = await createUser(server.database.db, {
      org: 'initech',
      email: 'someone@initech.example',
      role: 'owner',
    });
    const client = new WebClient(server.url);
    for (let attempt = 0; attempt < SIGN_IN_ATTEMPTS_PER_ADDRESS; attempt++) {
      const response = await client.signIn(`user${attempt}@initech.example`, 'a guess');
      expect(response.status).toBe(401);
    }
    const throttled = await client.signIn(user.email, user.oneTimePassword);
    expect(throttled.status).toBe(429);
    expect(textOf(throttled.body)).toContain('Too many sign-in attempts.');
  });
});
