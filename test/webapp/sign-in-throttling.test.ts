// Sign-in throttling (docs/security.md, "Sign-in throttling"; OWASP ASVS 2.2.1): failures
// are counted per client address and per account and address, never per account alone,
// so that nobody can lock the owner out by failing from elsewhere; every refused attempt
// is in the audit log, a run of throttled ones as one entry with its count. The suite's
// server listens on 127.0.0.1, which the addresses of 127/8 reach: each client below
// comes from an address of its own.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/entry.js';
import {
  SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS,
  SIGN_IN_FAILURES_PER_ADDRESS,
} from '../../src/sessions/throttle.js';
import { auditEntriesOf } from '../audit/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { textOf, WebClient, webDataSet } from '../helpers/web-client.js';

const ORG = 'initech';
// Dozens of sign-ins, each hashing a password with scrypt: 10–45 s on a loaded 2-core machine.
const SLOW_MS = 120_000;

describe('sign-in throttling', () => {
  let server: TestServer;
  let owner: { email: string; oneTimePassword: string };
  let bystander: { email: string; oneTimePassword: string };
  const from = (address: string) => new WebClient(server.url, address);

  beforeEach(async () => {
    server = await startTestServer({ dataSets: [webDataSet(ORG)] });
    owner = await createUser(server.database.db, {
      org: ORG,
      email: 'owner@initech.example',
      role: 'owner',
    });
    bystander = await createUser(server.database.db, {
      org: ORG,
      email: 'bystander@initech.example',
      role: 'admin',
    });
  });
  afterEach(() => server.close());

  /** The sign-in actions of the log, oldest first: action, email, address, details. */
  async function signInEntries() {
    await server.app.signInThrottle.flush();
    return (await auditEntriesOf(server.database.db, ORG))
      .filter((entry: AuditEntry) => entry.action.startsWith('user.sign'))
      .map((entry) => [entry.action, entry.actor, entry.clientAddress, entry.details?.attempts]);
  }

  it(
    `after ${SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS} failures on the owner from one address, that address is refused (429, the right password too) while the owner signs in from another, and the bystander from the same one`,
    async () => {
      const attacker = from('127.0.0.2');
      for (let attempt = 0; attempt < SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS; attempt++) {
        expect((await attacker.signIn('Owner@initech.example', `guess ${attempt}`)).status).toBe(
          401,
        );
      }
      const throttled = await attacker.signIn(owner.email, owner.oneTimePassword);
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(800);
      expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(900);
      expect(textOf(throttled.body)).toContain(
        'Too many sign-in attempts. Try again in 15 minutes.',
      );
      expect(attacker.cookies.has('compplan_session')).toBe(false);

      const ownersOwn = from('127.0.0.1');
      const signedIn = await ownersOwn.signIn(owner.email, owner.oneTimePassword);
      expect([signedIn.status, signedIn.location]).toEqual([303, '/app/password']);
      expect(ownersOwn.cookies.has('compplan_session')).toBe(true);
      const other = await from('127.0.0.2').signIn(bystander.email, bystander.oneTimePassword);
      expect(other.status).toBe(303);
    },
    SLOW_MS,
  );

  it(
    'bursts from several addresses at once throttle each of them, and the owner still signs in from a clean address; the log has every failure and one entry per address for its throttled run, with its count',
    async () => {
      const attackers = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
      const extra = 4;
      const statuses = await Promise.all(
        attackers.map(async (address) => {
          const client = from(address);
          const seen: number[] = [];
          for (let n = 0; n < SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS + extra; n++) {
            // The last attempt of each run has the right password: refused all the same.
            const last = n === SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS + extra - 1;
            seen.push(
              (await client.signIn(owner.email, last ? owner.oneTimePassword : `guess ${n}`))
                .status,
            );
          }
          return seen;
        }),
      );
      const expected = [
        ...Array(SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS).fill(401),
        ...Array(extra).fill(429),
      ];
      expect(statuses).toEqual([expected, expected, expected]);
      const clean = await from('127.0.0.5').signIn(owner.email, owner.oneTimePassword);
      expect(clean.status).toBe(303);

      const entries = await signInEntries();
      const failed = entries.filter(([action]) => action === 'user.sign-in-failed');
      expect(failed).toHaveLength(attackers.length * SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS);
      for (const address of attackers) {
        expect(failed.filter(([, , at]) => at === address)).toHaveLength(
          SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS,
        );
      }
      expect(
        entries
          .filter(([action]) => action === 'user.sign-in-throttled')
          .sort((a, b) => String(a[2]).localeCompare(String(b[2]))),
      ).toEqual(
        attackers.map((address) => ['user.sign-in-throttled', owner.email, address, extra]),
      );
      expect(entries.at(-1)).toEqual(['user.signed-in', owner.email, '127.0.0.5', undefined]);
    },
    SLOW_MS,
  );

  it(
    `after ${SIGN_IN_FAILURES_PER_ADDRESS} failures from one address on any accounts, it is refused for every account (the right password too); another address is not`,
    async () => {
      const sprayer = from('127.0.0.2');
      for (let attempt = 0; attempt < SIGN_IN_FAILURES_PER_ADDRESS; attempt++) {
        const response = await sprayer.signIn(`user${attempt}@initech.example`, 'a guess');
        expect(response.status).toBe(401);
      }
      const throttled = await sprayer.signIn(bystander.email, bystander.oneTimePassword);
      expect(throttled.status).toBe(429);
      expect(textOf(throttled.body)).toContain('Too many sign-in attempts.');
      expect((await sprayer.signIn(owner.email, 'a guess')).status).toBe(429);
      expect((await from('127.0.0.3').signIn(owner.email, owner.oneTimePassword)).status).toBe(303);
      // Emails of no user are in no organisation's log; the bystander's and the owner's
      // throttled attempts are, one run each.
      expect(
        (await signInEntries()).filter(([action]) => action === 'user.sign-in-throttled'),
      ).toEqual([
        ['user.sign-in-throttled', bystander.email, '127.0.0.2', 1],
        ['user.sign-in-throttled', owner.email, '127.0.0.2', 1],
      ]);
    },
    SLOW_MS,
  );
});
