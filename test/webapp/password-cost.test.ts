// The cost of password hashes: production's (scrypt N = 2^15) wherever compplan makes them,
// a cheaper one only where a test asks for it (TEST_PASSWORD_HASHING, which every other
// test server and test user has). Each hash names its own parameters, so a hash of either
// cost verifies on an app of either cost. Both dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_HASHING } from '../../src/users/password.js';
import { createUser as createUserAtProductionCost } from '../../src/users/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { WebClient, webDataSet } from '../helpers/web-client.js';

const PRODUCTION_HASH = /^\$scrypt\$v=1\$n=32768,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;
const TEST_HASH = /^\$scrypt\$v=1\$n=1024,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;
const PASSWORD = 'a long enough password';

async function storedHash(server: TestServer, email: string): Promise<string> {
  const row = await server.database.db
    .selectFrom('users')
    .select('password_hash')
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  return row.password_hash;
}

/** Signs in with the one-time password, chooses PASSWORD, signs out by forgetting cookies, signs in with it. */
async function signInTwice(server: TestServer, email: string, oneTimePassword: string) {
  await new WebClient(server.url).signInFirstTime(email, oneTimePassword, PASSWORD);
  const again = await new WebClient(server.url).signIn(email, PASSWORD);
  expect(again.status).toBe(303);
  expect(again.location).toBe('/app/settings/connections');
}

describe('password hashes at production cost', () => {
  let production: TestServer;
  let cheap: TestServer;

  beforeAll(async () => {
    [production, cheap] = await Promise.all([
      startTestServer({ dataSets: [webDataSet('initech')], passwordHashing: PASSWORD_HASHING }),
      startTestServer({ dataSets: [webDataSet('initech')] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([production?.close(), cheap?.close()]);
  });

  it('the app as compplan serve builds it stores the chosen password with N=32768, r=8, p=1; a one-time password of production cost signs in', async () => {
    const email = 'olivia@initech.example';
    const user = await createUserAtProductionCost(production.database.db, {
      org: 'initech',
      email,
      role: 'owner',
    });
    expect(await storedHash(production, email)).toMatch(PRODUCTION_HASH);
    await signInTwice(production, email, user.oneTimePassword);
    expect(await storedHash(production, email)).toMatch(PRODUCTION_HASH);
  });

  it('a hash of the test cost signs in on the app of production cost, and one of production cost on a test app', async () => {
    const tested = await createUser(production.database.db, {
      org: 'initech',
      email: 'adam@initech.example',
      role: 'admin',
    });
    expect(await storedHash(production, 'adam@initech.example')).toMatch(TEST_HASH);
    await signInTwice(production, 'adam@initech.example', tested.oneTimePassword);

    const made = await createUserAtProductionCost(cheap.database.db, {
      org: 'initech',
      email: 'eve@initech.example',
      role: 'owner',
    });
    expect(await storedHash(cheap, 'eve@initech.example')).toMatch(PRODUCTION_HASH);
    await signInTwice(cheap, 'eve@initech.example', made.oneTimePassword);
    // The password chosen on the test app is hashed at the test cost.
    expect(await storedHash(cheap, 'eve@initech.example')).toMatch(TEST_HASH);
  });
});
