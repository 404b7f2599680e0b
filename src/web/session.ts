// The web application's shared preHandlers, in the order routes.ts declares them: the
// session (a signed-in user, or a redirect to sign-in or to the password change), then the
// CSRF check of a form post (and a form sent twice). Also the cookies they read and set.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../audit/entry.js';
import { claimFormId, FORM_ID_FIELD, FORM_ID_SHAPE } from '../sessions/forms.js';
import { resumeSession, SESSION_MAX_MS, type Session, tokensMatch } from '../sessions/service.js';
import { findOrganizationById, type Organization } from '../tenancy/organizations.js';
import type { User } from '../users/repository.js';
import {
  formField,
  isHttps,
  readCookie,
  redirect,
  SESSION_COOKIE,
  sendPage,
  setCookie,
} from './http.js';
import { expiredFormPage, messagePage } from './layout.js';
import { PAGES, RESENT } from './paths.js';

export interface SignedSession {
  session: Session;
  organization: Organization;
  /** The cookie value of the session. */
  sessionId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the web application's session check on the pages that need one. */
    signed: SignedSession | null;
  }
}

/** Sets (or, with '', deletes) one of the web application's cookies. */
export function cookie(request: FastifyRequest, reply: FastifyReply, name: string, value: string) {
  setCookie(reply, name, value, {
    secure: isHttps(request),
    maxAge: value === '' ? 0 : name === SESSION_COOKIE ? SESSION_MAX_MS / 1000 : 60 * 60,
    sameSite: name === SESSION_COOKIE ? 'Lax' : 'Strict',
  });
}

/** Browsers say when a request comes from another site; such a form post is refused. */
export function crossSite(request: FastifyRequest): boolean {
  return request.headers['sec-fetch-site'] === 'cross-site';
}

/** A user as the audit log records them: who, and from which client address. */
export const userActor = (user: User, request: FastifyRequest): Actor => ({
  kind: 'user',
  userId: user.id,
  email: user.email,
  address: request.ip,
});

// The page a form sent again goes back to: the settings page its route is under;
// Connections for its own forms (the keys) and the sign-out form.
const FORM_PAGES = [PAGES.webhooks, PAGES.roles, PAGES.users, PAGES.data];

export function sessionChecks(app: FastifyInstance) {
  /** preHandler: a signed-in user, or a redirect to sign-in (or to the password change). */
  async function requireSignedIn(request: FastifyRequest, reply: FastifyReply) {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const session = await resumeSession(app.db, sessionId);
    const organization =
      session && (await findOrganizationById(app.db, session.user.organizationId));
    if (!session || !sessionId || !organization) {
      if (sessionId) cookie(request, reply, SESSION_COOKIE, '');
      return redirect(reply, PAGES.signIn);
    }
    request.signed = { session, organization, sessionId };
    const onPasswordPage = request.routeOptions.url === PAGES.password;
    if (session.user.mustChangePassword && !onPasswordPage && request.method === 'GET') {
      return redirect(reply, PAGES.password);
    }
    if (session.user.mustChangePassword && !onPasswordPage && request.url !== PAGES.signOut) {
      return sendPage(
        reply,
        403,
        messagePage('Choose your password first', 'Choose your own password to continue.', {
          href: PAGES.password,
          label: 'Choose a password',
        }),
      );
    }
  }

  /** preHandler of every form post of a session: same-site, with the session's token. */
  async function requireCsrfToken(request: FastifyRequest, reply: FastifyReply) {
    const signed = request.signed;
    if (
      !signed ||
      crossSite(request) ||
      !tokensMatch(formField(request, '_csrf'), signed.session.csrfToken)
    ) {
      request.log.warn({ url: request.url }, 'web form post refused: missing or wrong CSRF token');
      return sendPage(reply, 403, expiredFormPage());
    }
    // The same form sent again (Back and resend, a double click, a replay) does nothing:
    // its work was done the first time. The browser goes to the page the form was on.
    const formId = formField(request, FORM_ID_FIELD);
    if (formId === '') return;
    if (!FORM_ID_SHAPE.test(formId)) {
      request.log.warn({ url: request.url }, 'web form post refused: malformed form id');
      return sendPage(reply, 403, expiredFormPage());
    }
    if (!(await claimFormId(app.db, signed.sessionId, formId))) {
      request.log.info({ url: request.url }, 'web form sent again: nothing done');
      const route = request.routeOptions.url ?? '';
      const page = FORM_PAGES.find((p) => route.startsWith(p)) ?? PAGES.connections;
      return redirect(reply, `${page}?${RESENT}`);
    }
  }

  return { requireSignedIn, requireCsrfToken };
}
