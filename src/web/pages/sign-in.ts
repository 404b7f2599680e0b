// Sign-in, sign-out and the first sign-in's password change. Sign-in has no session yet:
// its form carries a double-submit token (the cookie compplan_sign_in and the field).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordAction, withRecordedAction } from '../../audit/repository.js';
import {
  endSession,
  endUserSessions,
  randomToken,
  resumeSession,
  startSession,
  tokensMatch,
} from '../../sessions/service.js';
import { noteSignIn } from '../../users/repository.js';
import { authenticate, chooseNewPassword, passwordProblem } from '../../users/service.js';
import type { Page } from '../context.js';
import {
  formField,
  readCookie,
  redirect,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  sendPage,
} from '../http.js';
import { PAGES, routeOf } from '../paths.js';
import { cookie, crossSite, userActor } from '../session.js';
import { choosePasswordPage, signInPage } from './sign-in.views.js';

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const signInPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;

  // --- sign-in and sign-out ------------------------------------------------------------
  function renderSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    input: { email?: string; error?: string; notice?: string },
  ) {
    // One token per browser, kept while it signs in (several open tabs keep working).
    const current = readCookie(request, SIGN_IN_COOKIE);
    const token = current && TOKEN_SHAPE.test(current) ? current : randomToken();
    cookie(request, reply, SIGN_IN_COOKIE, token);
    return sendPage(reply, status, signInPage({ csrfToken: token, ...input }));
  }

  app.get<{ Querystring: { signedOut?: string } }>(
    routeOf(PAGES.signIn),
    context.open,
    async (request, reply) => {
      if (await resumeSession(app.db, readCookie(request, SESSION_COOKIE))) {
        return redirect(reply, PAGES.connections);
      }
      const notice = request.query.signedOut !== undefined ? 'You are signed out.' : undefined;
      return renderSignIn(request, reply, 200, notice ? { notice } : {});
    },
  );

  app.post(routeOf(PAGES.signIn), context.open, async (request, reply) => {
    const email = formField(request, 'email').trim();
    const password = formField(request, 'password');
    const expected = readCookie(request, SIGN_IN_COOKIE);
    if (crossSite(request) || !expected || !tokensMatch(formField(request, '_csrf'), expected)) {
      return renderSignIn(request, reply, 403, {
        email,
        error: 'The sign-in form had expired. Please sign in again.',
      });
    }
    // Per address, and per account and address (src/sessions/throttle.ts).
    const attempt = await app.signInThrottle.begin(request.ip, formField(request, 'email'));
    if (attempt.refused) {
      const seconds = attempt.retryAfterSeconds;
      const minutes = Math.max(1, Math.ceil(seconds / 60));
      request.log.warn('sign-in throttled');
      reply.header('retry-after', String(seconds));
      return renderSignIn(request, reply, 429, {
        email,
        error: `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      });
    }
    const { user, attempted } =
      email && password
        ? await authenticate(app.db, email, password, context.settings.passwordHashing)
        : { user: null };
    if (!user) {
      // In the audit log of the organisation whose user's email was given (an email of no
      // user belongs to no organisation: the log line only).
      if (attempted) {
        await recordAction(app.db, {
          organizationId: attempted.organizationId,
          action: 'user.sign-in-failed',
          actor: userActor(attempted, request),
        });
      }
      return renderSignIn(request, reply, 401, {
        email,
        error: 'The email or the password is not right.',
      });
    }
    await attempt.succeeded();
    // A new session id at every sign-in (no fixation); an older session of this browser ends.
    const previous = readCookie(request, SESSION_COOKIE);
    if (previous) await endSession(app.db, previous);
    const session = await withRecordedAction(
      app.db,
      (trx) => startSession(trx, user),
      () => ({
        organizationId: user.organizationId,
        action: 'user.signed-in',
        actor: userActor(user, request),
      }),
    );
    await noteSignIn(app.db, user.id, new Date().toISOString());
    cookie(request, reply, SESSION_COOKIE, session.id);
    cookie(request, reply, SIGN_IN_COOKIE, '');
    request.log.info({ userId: user.id }, 'signed in');
    return redirect(reply, user.mustChangePassword ? PAGES.password : PAGES.connections);
  });

  app.post(routeOf(PAGES.signOut), signedInPost, async (request, reply) => {
    const signed = request.signed;
    if (signed) await endSession(app.db, signed.sessionId);
    cookie(request, reply, SESSION_COOKIE, '');
    return redirect(reply, `${PAGES.signIn}?signedOut`);
  });

  // --- first sign-in: choose a password -------------------------------------------------
  app.get(routeOf(PAGES.password), signedIn, async (request, reply) => {
    const { user, csrfToken } = view(request);
    if (!user.mustChangePassword) return redirect(reply, PAGES.connections);
    return sendPage(reply, 200, choosePasswordPage({ csrfToken, email: user.email }));
  });

  app.post(routeOf(PAGES.password), signedInPost, async (request, reply) => {
    const { user, csrfToken } = view(request);
    if (!user.mustChangePassword) return redirect(reply, PAGES.connections);
    const password = formField(request, 'password');
    const problem = passwordProblem(password, formField(request, 'confirmation'), user);
    const outcome = problem
      ? null
      : await chooseNewPassword(app.db, user, password, context.settings.passwordHashing);
    const error =
      problem ??
      (outcome === 'same-as-current'
        ? 'Choose a password of your own, not the one-time password.'
        : undefined);
    if (error) {
      return sendPage(reply, 422, choosePasswordPage({ csrfToken, email: user.email, error }));
    }
    // Every session that knew the one-time password ends; this browser gets a new one.
    await endUserSessions(app.db, user.id);
    const session = await startSession(app.db, { ...user, mustChangePassword: false });
    cookie(request, reply, SESSION_COOKIE, session.id);
    request.log.info({ userId: user.id }, 'password chosen');
    return redirect(reply, PAGES.connections);
  });
};
