// Sign-in throttling of the web application (docs/security.md, "Sign-in throttling"; OWASP
// ASVS 2.2.1): attempts are counted per client address (any accounts) and per account and
// address, never per account alone, so that nobody can lock an account's owner out by
// failing on purpose from elsewhere: a correct password from an address that has not
// failed signs in while other addresses are throttled for the same account. An address
// that fails too often is throttled for every account.
//
// Each attempt takes a point of both limits before the password is checked (so that a
// burst of attempts at once cannot all slip in before a failure is counted), and a
// sign-in that succeeds gives its points back: what the limits hold are failures, and the
// attempts refused while over them. The counters are rate-limiter-flexible's, in Redis when
// REDIS_URL names one, as every other limit (src/rate-limit/window-counter.ts).
//
// Every refused attempt is in the audit log of the organisation whose user's email was
// given: a wrong password as `user.sign-in-failed` (one entry each, by the sign-in route;
// the limits bound how many), a throttled attempt — a correct password too, which is not
// checked — as `user.sign-in-throttled`, one entry per address and account for each run
// of them within a minute, with the count (`details.attempts`), so that a flood of
// requests cannot flood the log. The runs are kept in memory and written every minute and
// when the server stops (SIGKILL loses at most the last minute's runs); at most
// MAX_RUNS are kept, and the attempts of further runs are counted and logged only. An
// email of no user belongs to no organisation: the log line only, as for a failure.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { recordAction } from '../audit/repository.js';
import type { WindowCounter } from '../rate-limit/window-counter.js';
import { emailKey, findCredentials } from '../users/repository.js';

/** The window both limits count in. */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** Failed (or refused) attempts from one address, whatever the accounts, in a window. */
export const SIGN_IN_FAILURES_PER_ADDRESS = 30;
/** Failed (or refused) attempts on one account from one address in a window. */
export const SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS = 10;
/** How often the runs of throttled attempts are written to the audit log. */
export const THROTTLED_RUNS_EVERY_MS = 60 * 1000;
// Runs (address and account) kept between writes; a flood from more is counted only.
const MAX_RUNS = 10_000;

export type SignInAttempt =
  | { refused: true; retryAfterSeconds: number }
  | {
      refused: false;
      /** The password was right: the attempt gives its points back. */
      succeeded(): Promise<void>;
    };

export interface SignInThrottle {
  /** Counts an attempt before its password is checked; refused when over a limit. */
  begin(address: string, email: string): Promise<SignInAttempt>;
  /** Writes the runs of throttled attempts kept now (tests; the server when it stops). */
  flush(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    signInThrottle: SignInThrottle;
  }
}

interface Run {
  address: string;
  email: string;
  attempts: number;
  first: number;
  last: number;
}

export default fp(
  async (app: FastifyInstance) => {
    const perAddress: WindowCounter = app.rateLimits.counter({
      name: 'web-sign-in-address',
      points: SIGN_IN_FAILURES_PER_ADDRESS,
      windowMs: SIGN_IN_WINDOW_MS,
    });
    const perAccountAndAddress: WindowCounter = app.rateLimits.counter({
      name: 'web-sign-in-account-address',
      points: SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS,
      windowMs: SIGN_IN_WINDOW_MS,
    });
    let runs = new Map<string, Run>();
    let uncounted = 0;

    function noteThrottled(address: string, email: string): void {
      const name = `${address}\n${email}`;
      const now = Date.now();
      const run = runs.get(name);
      if (run) {
        run.attempts++;
        run.last = now;
      } else if (runs.size < MAX_RUNS) {
        runs.set(name, { address, email, attempts: 1, first: now, last: now });
      } else {
        uncounted++;
      }
    }

    async function flush(): Promise<void> {
      const written = runs;
      const lost = uncounted;
      runs = new Map();
      uncounted = 0;
      if (lost > 0) {
        app.log.warn(
          { attempts: lost },
          'throttled sign-in attempts beyond the runs kept: not in the audit log',
        );
      }
      let unknown = 0;
      for (const run of written.values()) {
        const found = await findCredentials(app.db, run.email);
        if (!found) {
          unknown += run.attempts;
          continue;
        }
        const { user } = found;
        await recordAction(app.db, {
          organizationId: user.organizationId,
          action: 'user.sign-in-throttled',
          actor: { kind: 'user', userId: user.id, email: user.email, address: run.address },
          details: {
            attempts: run.attempts,
            first: new Date(run.first).toISOString(),
            last: new Date(run.last).toISOString(),
          },
          at: new Date(run.last),
        });
      }
      if (unknown > 0) {
        app.log.warn({ attempts: unknown }, 'throttled sign-in attempts for emails of no user');
      }
    }

    async function flushLogged(): Promise<void> {
      try {
        await flush();
      } catch (error) {
        app.log.warn({ err: error }, 'could not write throttled sign-in attempts to the audit log');
      }
    }
    const timer = setInterval(() => void flushLogged(), THROTTLED_RUNS_EVERY_MS);
    timer.unref();
    // Before the database closes (hooks of plugins registered later run first).
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await flushLogged();
    });

    app.decorate<SignInThrottle>('signInThrottle', {
      async begin(address, typed) {
        const email = emailKey(typed);
        const pair = `${email}\n${address}`;
        const [fromAddress, onAccount] = [
          await perAddress.take(address),
          await perAccountAndAddress.take(pair),
        ];
        const over = [fromAddress, onAccount].filter((count) => count.exceeded);
        if (over.length > 0) {
          noteThrottled(address, email);
          const waitMs = Math.max(...over.map((count) => count.resetsInMs));
          return { refused: true, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
        }
        return {
          refused: false,
          async succeeded() {
            await perAddress.giveBack(address);
            await perAccountAndAddress.giveBack(pair);
          },
        };
      },
      flush,
    });
  },
  { name: 'sign-in-throttle', dependencies: ['database', 'rate-limit'] },
);
