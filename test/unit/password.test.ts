// Password hashes of the web application's users: scrypt, salted per password, in a
// versioned string that names its parameters.
import { describe, expect, it } from 'vitest';
import {
  hashPassword,
  PASSWORD_HASHING,
  verifyDecoy,
  verifyPassword,
} from '../../src/users/password.js';
import { TEST_PASSWORD_HASHING } from '../helpers/set-up.js';

const HASH = /^\$scrypt\$v=1\$n=32768,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;

describe('password hashes', () => {
  it('are salted per password, so the same password hashes differently, and both verify', async () => {
    const [first, second] = await Promise.all([
      hashPassword('the same password'),
      hashPassword('the same password'),
    ]);
    expect(first).toMatch(HASH);
    expect(second).toMatch(HASH);
    expect(first).not.toBe(second);
    expect(await verifyPassword('the same password', first)).toBe(true);
    expect(await verifyPassword('the same password', second)).toBe(true);
    expect(await verifyPassword('the same passwore', first)).toBe(false);
  });

  it('do not verify against a string of an unknown version or shape', async () => {
    const hash = await hashPassword('pw');
    expect(await verifyPassword('pw', hash.replace('$v=1$', '$v=2$'))).toBe(false);
    expect(await verifyPassword('pw', 'pw')).toBe(false);
    expect(await verifyPassword('pw', '')).toBe(false);
  });

  it("are made at production's cost unless a cost is given; a hash of another cost names it and verifies by it", async () => {
    expect(PASSWORD_HASHING.cost).toEqual({ n: 32_768, r: 8, p: 1 });
    const cheap = await hashPassword('pw', TEST_PASSWORD_HASHING);
    expect(cheap).toMatch(/^\$scrypt\$v=1\$n=1024,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('pw', cheap)).toBe(true);
    expect(await verifyPassword('pv', cheap)).toBe(false);
    // The parameters are read from the hash: the same salt and hash under other ones fail.
    expect(await verifyPassword('pw', cheap.replace('n=1024', 'n=2048'))).toBe(false);
    expect(await verifyDecoy('pw', TEST_PASSWORD_HASHING)).toBe(false);
  });
});
