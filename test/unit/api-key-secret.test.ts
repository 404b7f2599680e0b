// The API key secret (src/api-keys/secret.ts): `cpk_` + 36 random base62
// characters + a 6-character checksum; only its SHA-256 is stored.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DISPLAY_PREFIX_LENGTH,
  displayPrefix,
  generateSecret,
  hashSecret,
  isWellFormedSecret,
  SECRET_LENGTH,
} from '../../src/api-keys/secret.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM = 36;

describe('API key secrets', () => {
  it('have the form cpk_ followed by 42 base62 characters, and pass their own check', () => {
    expect(SECRET_LENGTH).toBe(46);
    for (let i = 0; i < 200; i++) {
      const secret = generateSecret();
      expect(secret).toMatch(/^cpk_[0-9A-Za-z]{42}$/);
      expect(isWellFormedSecret(secret)).toBe(true);
    }
  });

  it('fail the check when any single character is changed', () => {
    for (let n = 0; n < 5; n++) {
      const secret = generateSecret();
      for (let position = 0; position < secret.length; position++) {
        for (const replacement of `${BASE62}_-`) {
          if (replacement === secret[position]) continue;
          const changed = secret.slice(0, position) + replacement + secret.slice(position + 1);
          if (isWellFormedSecret(changed)) {
            throw new Error(`accepted ${changed} (position ${position} of ${secret})`);
          }
        }
      }
    }
  });

  it('fail the check when two neighbouring characters are swapped, or the length is wrong', () => {
    const secret = generateSecret();
    for (let position = 4; position < secret.length - 1; position++) {
      if (secret[position] === secret[position + 1]) continue;
      const swapped =
        secret.slice(0, position) +
        secret[position + 1] +
        secret[position] +
        secret.slice(position + 2);
      expect(isWellFormedSecret(swapped)).toBe(false);
    }
    expect(isWellFormedSecret(secret.slice(0, -1))).toBe(false);
    expect(isWellFormedSecret(`${secret}0`)).toBe(false);
    expect(isWellFormedSecret('')).toBe(false);
    expect(isWellFormedSecret(` ${secret}`)).toBe(false);
  });

  it('carry at least 192 bits of randomness: 36 characters, each uniform over all 62', () => {
    // 36 × log2(62) ≈ 214 bits. Every one of the 36 positions must take every base62
    // value, and the characters must be evenly spread (a modulo bias would show).
    expect(RANDOM * Math.log2(62)).toBeGreaterThanOrEqual(192);
    const samples = 3_000;
    const perPosition = Array.from({ length: RANDOM }, () => new Set<string>());
    const counts = new Map<string, number>();
    for (let i = 0; i < samples; i++) {
      const body = generateSecret().slice(4, 4 + RANDOM);
      [...body].forEach((char, position) => {
        perPosition[position]?.add(char);
        counts.set(char, (counts.get(char) ?? 0) + 1);
      });
    }
    for (const seen of perPosition) expect(seen.size).toBe(62);
    const expected = (samples * RANDOM) / 62;
    for (const char of BASE62) {
      const count = counts.get(char) ?? 0;
      // ±12 %: about 5 standard deviations at this sample size.
      expect(Math.abs(count - expected) / expected, char).toBeLessThan(0.12);
    }
  });

  it('are distinct', () => {
    const secrets = new Set(Array.from({ length: 10_000 }, generateSecret));
    expect(secrets.size).toBe(10_000);
  });

  it('are stored as their SHA-256 in lowercase hex', () => {
    expect(hashSecret('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    const secret = generateSecret();
    expect(hashSecret(secret)).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(hashSecret(secret)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('show only a short non-secret prefix: cpk_ and 8 characters', () => {
    const secret = generateSecret();
    expect(DISPLAY_PREFIX_LENGTH).toBe(12);
    expect(displayPrefix(secret)).toBe(secret.slice(0, 12));
  });
});
