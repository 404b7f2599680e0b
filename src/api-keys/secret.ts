// The API key secret format: `cpk_` + 36 random base62 characters (214 bits from the
// CSPRNG) + a 6-character base62 CRC32 of those 36. The fixed prefix lets secret
// scanners recognise a leaked key; the checksum lets us reject a mistyped or made-up key
// without a database lookup. Only a SHA-256 of the secret is stored: with 214 random
// bits there is nothing for a slow password hash to protect against.
import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const SECRET_PREFIX = 'cpk_';
const RANDOM_LENGTH = 36;
const CHECKSUM_LENGTH = 6;
export const SECRET_LENGTH = SECRET_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
/** How much of a secret may be shown (key lists, logs of key management): prefix + 8. */
export const DISPLAY_PREFIX_LENGTH = SECRET_PREFIX.length + 8;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_SHAPE = new RegExp(
  `^${SECRET_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`,
);

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes above it are dropped so that every character is equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let value = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateSecret(): string {
  const body = randomBase62(RANDOM_LENGTH);
  return `${SECRET_PREFIX}${body}${checksum(body)}`;
}

/** True when the text has the shape and checksum of a key we could have issued. */
export function isWellFormedSecret(text: string): boolean {
  if (!SECRET_SHAPE.test(text)) return false;
  const body = text.slice(SECRET_PREFIX.length, SECRET_PREFIX.length + RANDOM_LENGTH);
  return text.slice(-CHECKSUM_LENGTH) === checksum(body);
}

// crypto.hash, one call without a Hash object: every request with a key hashes it.
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}
