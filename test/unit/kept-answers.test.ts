// The response cache's store (src/http/kept-answers.ts): answers by reader and URL,
// bounded in bytes overall and per organisation, so that one organisation's reads cannot
// push every other organisation's answers out. Small limits here; the cache itself uses
// 16 MiB and 4 MiB (src/http/response-cache.ts; its behaviour over HTTP is in
// test/api/response-cache.test.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type KeptAnswer, KeptAnswers } from '../../src/http/kept-answers.js';
import { TestClock } from '../helpers/clock.js';

const KIB = 1024;
const limits = {
  bytes: 64 * KIB,
  organizationBytes: 16 * KIB,
  answerBytes: 8 * KIB,
  maxAgeMs: 60_000,
};
const answer = (bytes: number, fill = 'x'): KeptAnswer => ({
  body: Buffer.alloc(bytes, fill),
  contentType: 'application/json; charset=utf-8',
  revision: 1,
  encoded: {},
  employees: 0,
  columnsServed: null,
});
/** A key of the organisation that may read all of it. */
const reader = (organizationId: string) => ({ organizationId, fingerprint: organizationId });
const page = (n: number) => `/v1/compensationPlanning/meritCycles?page=${n}`;

describe('kept answers', () => {
  it('gives back what it kept, for the organisation and URL it was kept under only', () => {
    const kept = new KeptAnswers(limits);
    kept.keep(reader('org_a'), page(1), answer(KIB, 'a'));
    expect(kept.get(reader('org_a'), page(1))?.body.equals(Buffer.alloc(KIB, 'a'))).toBe(true);
    expect(kept.get(reader('org_b'), page(1))).toBeUndefined();
    expect(kept.get(reader('org_a'), page(2))).toBeUndefined();
  });

  it('keys of one organisation with different scopes get their own answers, and share the organisation’s bytes', () => {
    const kept = new KeptAnswers(limits);
    const restricted = { organizationId: 'org_a', fingerprint: 'org_a/scope' };
    kept.keep(reader('org_a'), page(1), answer(KIB, 'a'));
    expect(kept.get(restricted, page(1))).toBeUndefined();
    kept.keep(restricted, page(1), answer(KIB, 'r'));
    expect(kept.get(restricted, page(1))?.body.equals(Buffer.alloc(KIB, 'r'))).toBe(true);
    expect(kept.get(reader('org_a'), page(1))?.body.equals(Buffer.alloc(KIB, 'a'))).toBe(true);
    expect(kept.bytesOf('org_a')).toBe(kept.bytes);
    expect(kept.bytes).toBeGreaterThan(2 * KIB);
  });

  it('one organisation reading many pages keeps at most its share, dropping its least recently used first', () => {
    const kept = new KeptAnswers(limits);
    for (let n = 0; n < 40; n++) kept.keep(reader('org_a'), page(n), answer(4 * KIB));
    expect(kept.bytesOf('org_a')).toBeLessThanOrEqual(limits.organizationBytes);
    // 4 KiB each plus the key and bookkeeping: three fit in 16 KiB, the last three kept.
    expect([37, 38, 39].map((n) => kept.get(reader('org_a'), page(n)) !== undefined)).toEqual([
      true,
      true,
      true,
    ]);
    expect(kept.get(reader('org_a'), page(36))).toBeUndefined();
  });

  it("one organisation's reads leave another's answers where they are", () => {
    const kept = new KeptAnswers(limits);
    kept.keep(reader('org_b'), page(1), answer(4 * KIB, 'b'));
    for (let n = 0; n < 100; n++) kept.keep(reader('org_a'), page(n), answer(4 * KIB));
    expect(kept.get(reader('org_b'), page(1))?.body.equals(Buffer.alloc(4 * KIB, 'b'))).toBe(true);
  });

  it('a read keeps an answer in: the one read again outlives one kept after it', () => {
    const kept = new KeptAnswers(limits);
    kept.keep(reader('org_a'), page(1), answer(4 * KIB));
    kept.keep(reader('org_a'), page(2), answer(4 * KIB));
    kept.keep(reader('org_a'), page(3), answer(4 * KIB));
    kept.get(reader('org_a'), page(1));
    kept.keep(reader('org_a'), page(4), answer(4 * KIB));
    expect(kept.get(reader('org_a'), page(1))).toBeDefined();
    expect(kept.get(reader('org_a'), page(2))).toBeUndefined();
  });

  it('a compressed form added to a kept answer counts against its share', () => {
    const kept = new KeptAnswers(limits);
    kept.keep(reader('org_a'), page(1), answer(4 * KIB));
    const before = kept.bytesOf('org_a');
    kept.addEncoding(reader('org_a'), page(1), 'gzip', Buffer.alloc(KIB));
    expect(kept.bytesOf('org_a')).toBe(before + KIB);
    expect(kept.get(reader('org_a'), page(1))?.encoded.gzip?.length).toBe(KIB);
  });

  it('an answer is kept for its maximum age from when it was built: adding an encoding does not renew it, building it again does', () => {
    const clock = new TestClock();
    const kept = new KeptAnswers({ ...limits, maxAgeMs: 1_000 }, clock);
    kept.keep(reader('org_a'), page(1), answer(KIB));
    kept.keep(reader('org_a'), page(2), answer(KIB));
    clock.advance(700);
    kept.addEncoding(reader('org_a'), page(1), 'br', Buffer.alloc(100));
    kept.keep(reader('org_a'), page(2), answer(KIB)); // built again
    clock.advance(299);
    expect(kept.get(reader('org_a'), page(1))).toBeDefined();
    clock.advance(2);
    expect(kept.get(reader('org_a'), page(1))).toBeUndefined();
    expect(kept.get(reader('org_a'), page(2))).toBeDefined();
  });

  it('an answer over the size bound is not kept, and takes the one it would replace with it', () => {
    const kept = new KeptAnswers(limits);
    kept.keep(reader('org_a'), page(1), answer(KIB));
    kept.keep(reader('org_a'), page(1), answer(9 * KIB));
    expect(kept.get(reader('org_a'), page(1))).toBeUndefined();
    expect(kept.bytesOf('org_a')).toBe(0);
  });

  it('never holds more than its bounds, and counts every organisation exactly, whatever is kept and read', () => {
    const step = fc.record({
      org: fc.constantFrom('org_a', 'org_b', 'org_c', 'org_d', 'org_e'),
      page: fc.integer({ min: 0, max: 30 }),
      bytes: fc.integer({ min: 0, max: 10 * KIB }),
      read: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const kept = new KeptAnswers(limits);
        for (const { org, page: n, bytes, read } of steps) {
          if (read) kept.get(reader(org), page(n));
          else kept.keep(reader(org), page(n), answer(bytes));
        }
        const orgs = ['org_a', 'org_b', 'org_c', 'org_d', 'org_e'];
        for (const org of orgs) {
          expect(kept.bytesOf(org)).toBeLessThanOrEqual(limits.organizationBytes);
        }
        expect(kept.bytes).toBeLessThanOrEqual(limits.bytes);
        expect(orgs.reduce((sum, org) => sum + kept.bytesOf(org), 0)).toBe(kept.bytes);
      }),
      { numRuns: 200 },
    );
  });
});
