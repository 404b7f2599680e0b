// Password hashing for the web application's users: scrypt from node:crypto, a random
// salt per password, and a self-describing, versioned hash string, so that the cost can
// be raised later and older hashes still verify (and are recognised as due for rehash):
//
//   $scrypt$v=1$n=32768,r=8,p=1$<salt, base64url>$<hash, base64url>
//
// N = 2^15, r = 8 takes about 50 ms and 32 MiB here: slow for a guesser, not for a person.
// Verification reads the parameters from the stored hash, so hashes of any cost verify.
import { randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';

const VERSION = 1;

export interface ScryptCost {
  n: number;
  r: number;
  p: number;
}

/** How new password hashes are made: production's cost unless a test gives its own. */
export interface PasswordHashing {
  cost: ScryptCost;
}

/** The cost of every hash the command line and `compplan serve` make. */
export const PASSWORD_HASHING: PasswordHashing = Object.freeze({
  cost: Object.freeze({ n: 32_768, r: 8, p: 1 }),
});
const SALT_BYTES = 16;
const HASH_BYTES = 32;

export const PASSWORD_MIN_LENGTH = 12;
// scrypt takes any length; the cap keeps one sign-in attempt from costing much more.
export const PASSWORD_MAX_LENGTH = 256;

const HASH_SHAPE =
  /^\$scrypt\$v=(\d+)\$n=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

function derive(password: string, salt: Buffer, cost: ScryptCost, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      length,
      // 128 × N × r bytes are needed; twice that leaves room for the implementation.
      { N: cost.n, r: cost.r, p: cost.p, maxmem: 256 * cost.n * cost.r },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

export async function hashPassword(
  password: string,
  { cost }: PasswordHashing = PASSWORD_HASHING,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, cost, HASH_BYTES);
  return `$scrypt$v=${VERSION}$n=${cost.n},r=${cost.r},p=${cost.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** True when `password` matches `stored`; false for a wrong password or an unknown format. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = HASH_SHAPE.exec(stored);
  if (!match) return false;
  const [, version, n, r, p, salt = '', hash = ''] = match;
  if (Number(version) !== VERSION) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(
    password,
    Buffer.from(salt, 'base64url'),
    { n: Number(n), r: Number(r), p: Number(p) },
    expected.length,
  );
  return timingSafeEqual(actual, expected);
}

// A hash of nothing anyone knows: sign-in with an unknown email verifies against it, so
// that it takes as long as with a known one and the timing tells nothing. One per cost:
// it costs what the hashes made beside it cost.
const decoys = new Map<string, Promise<string>>();
export async function verifyDecoy(
  password: string,
  hashing: PasswordHashing = PASSWORD_HASHING,
): Promise<false> {
  const { n, r, p } = hashing.cost;
  const key = `${n},${r},${p}`;
  let decoy = decoys.get(key);
  if (!decoy) {
    decoy = hashPassword(randomBytes(32).toString('base64url'), hashing);
    decoys.set(key, decoy);
  }
  await verifyPassword(password, await decoy);
  return false;
}

// No 0/O, 1/l/I: the one-time password is read off a terminal and typed by a person.
const ONE_TIME_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Four groups of five characters from 31: about 99 bits, e.g. `k7m2p-…`. */
export function generateOneTimePassword(): string {
  const groups: string[] = [];
  for (let group = 0; group < 4; group++) {
    let text = '';
    for (let i = 0; i < 5; i++) text += ONE_TIME_ALPHABET[randomInt(ONE_TIME_ALPHABET.length)];
    groups.push(text);
  }
  return groups.join('-');
}
