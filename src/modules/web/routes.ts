// The web application under /app: sign-in, the first-sign-in password change, and
// Settings → Connections (API keys) and Roles & Permissions. Outside the API scope: no
// x-api-key, no API quota; a session cookie instead, and a CSRF token on every form post.
// Keys and the setting are changed through the same modules as `compplan keys` and
// `compplan orgs set`, so the page and the command line cannot disagree.

import multipart from '@fastify/multipart';
import type {
  FastifyError,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RouteShorthandOptions,
} from 'fastify';
import type { Actor } from '../../audit/entry.js';
import { recordAction, withRecordedAction } from '../../audit/repository.js';
import type { DatabaseConfig, WebhookConfig } from '../../config.js';
import { openDatabase } from '../../db/connect.js';
import { UploadStaging } from '../../import/uploads.js';
import { findApiKey } from '../api-keys/repository.js';
import {
  createApiKey,
  KeyManagementError,
  listOrganizationApiKeys,
  revokeApiKeyById,
  rollApiKeyById,
} from '../api-keys/service.js';
import { findOrganizationById, type Organization } from '../organizations/repository.js';
import { changeApiKeysSetting } from '../organizations/service.js';
import { claimFormId, FORM_ID_FIELD, FORM_ID_SHAPE } from '../sessions/forms.js';
import { keepForOneView, takeOneView } from '../sessions/one-time-view.js';
import {
  endSession,
  endUserSessions,
  randomToken,
  resumeSession,
  SESSION_MAX_MS,
  type Session,
  startSession,
  tokensMatch,
} from '../sessions/service.js';
import { noteSignIn, type User } from '../users/repository.js';
import { authenticate, chooseNewPassword, passwordProblem } from '../users/service.js';
import { ASSETS } from './assets.js';
import { registerAuditPages } from './audit-pages.js';
import {
  acceptForms,
  addSecurityHeaders,
  formField,
  isHttps,
  originOf,
  readCookie,
  redirect,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  sendPage,
  setCookie,
} from './http.js';
import { formMessage, keyChoices, restrictionsOf } from './key-restrictions.js';
import type { PageContext } from './pages/context.js';
import { DATA_PAGE, registerDataPages } from './pages/data.js';
import { registerUserPages, USERS_PAGE } from './pages/users.js';
import {
  choosePasswordPage,
  connectionsPage,
  messagePage,
  revokePage,
  rolesPage,
  rollPage,
  signInPage,
} from './views.js';
import { registerWebhookPages } from './webhook-pages.js';
import { WEBHOOKS_PAGE } from './webhook-views.js';

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const CONNECTIONS = '/app/settings/connections';
const ROLES = '/app/settings/roles';
const SIGN_IN = '/app/sign-in';
const PASSWORD = '/app/password';

interface Signed {
  session: Session;
  organization: Organization;
  /** The cookie value of the session. */
  sessionId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the web application's session check on the pages that need one. */
    signed: Signed | null;
  }
}

// The web application's forms post to these URLs: the read-only API's 405 answers are not
// theirs (plugins/method-not-allowed.ts), and the API's OpenAPI document does not list them.
const WEB = {
  config: { methodNotAllowed: false },
  schema: { hide: true },
} satisfies RouteShorthandOptions;

/** The query flag of a page reached because its form had been sent already. */
const RESENT = 'resent';

const expiredFormPage = () =>
  messagePage(
    'This form has expired',
    'The form was not sent from this page or has expired. Go back, reload the page and try again.',
    { href: CONNECTIONS, label: 'Back to Settings' },
  );

/**
 * What Connections shows once, after the post that generated or rolled a key
 * (POST/redirect/GET); `rolledUntil`: the old secret's grace end, for a roll.
 */
interface NewKeyView {
  name: string;
  key: string;
  rolledUntil?: string;
}

const notFoundPage = () =>
  messagePage('Page not found', 'There is no page at this address.', {
    href: CONNECTIONS,
    label: 'Go to Settings',
  });

export const webRoutes: FastifyPluginAsync<{
  webhooks: WebhookConfig;
  changeRetentionDays: number;
  databaseConfig: DatabaseConfig;
}> = async (app, options) => {
  acceptForms(app);
  // Uploads (Settings → Data) are read part by part as they arrive, never whole.
  await app.register(multipart, { throwFileSizeLimit: true });
  addSecurityHeaders(app);
  app.decorateRequest('signed', null);

  const cookie = (request: FastifyRequest, reply: FastifyReply, name: string, value: string) =>
    setCookie(reply, name, value, {
      secure: isHttps(request),
      maxAge: value === '' ? 0 : name === SESSION_COOKIE ? SESSION_MAX_MS / 1000 : 60 * 60,
      sameSite: name === SESSION_COOKIE ? 'Lax' : 'Strict',
    });

  /** preHandler: a signed-in user, or a redirect to sign-in (or to the password change). */
  async function requireSignedIn(request: FastifyRequest, reply: FastifyReply) {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const session = await resumeSession(app.db, sessionId);
    const organization =
      session && (await findOrganizationById(app.db, session.user.organizationId));
    if (!session || !sessionId || !organization) {
      if (sessionId) cookie(request, reply, SESSION_COOKIE, '');
      return redirect(reply, SIGN_IN);
    }
    request.signed = { session, organization, sessionId };
    const onPasswordPage = request.routeOptions.url === PASSWORD;
    if (session.user.mustChangePassword && !onPasswordPage && request.method === 'GET') {
      return redirect(reply, PASSWORD);
    }
    if (session.user.mustChangePassword && !onPasswordPage && request.url !== '/app/sign-out') {
      return sendPage(
        reply,
        403,
        messagePage('Choose your password first', 'Choose your own password to continue.', {
          href: PASSWORD,
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
      const page =
        [ROLES, USERS_PAGE, DATA_PAGE, WEBHOOKS_PAGE].find((p) => route.startsWith(p)) ??
        CONNECTIONS;
      return redirect(reply, `${page}?${RESENT}`);
    }
  }

  const signedOf = (request: FastifyRequest): Signed => {
    if (!request.signed) throw new Error('a signed-in request was expected');
    return request.signed;
  };

  const view = (request: FastifyRequest) => {
    const signed = signedOf(request);
    return {
      user: signed.session.user,
      organization: signed.organization,
      csrfToken: signed.session.csrfToken,
    };
  };

  /** A user as the audit log records them: who, and from which client address. */
  const userActor = (user: User, request: FastifyRequest): Actor => ({
    kind: 'user',
    userId: user.id,
    email: user.email,
    address: request.ip,
  });
  const actorOf = (request: FastifyRequest) => userActor(view(request).user, request);

  const signedIn = { ...WEB, preHandler: requireSignedIn };
  const signedInPost = { ...WEB, preHandler: [requireSignedIn, requireCsrfToken] };

  // --- assets --------------------------------------------------------------------------
  for (const asset of Object.values(ASSETS)) {
    app.get(asset.path.slice('/app'.length), WEB, async (request, reply) => {
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', asset.etag);
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.type(asset.type).send(asset.body);
    });
  }

  // --- entry points --------------------------------------------------------------------
  app.get('/', WEB, async (request, reply) =>
    redirect(reply, readCookie(request, SESSION_COOKIE) ? CONNECTIONS : SIGN_IN),
  );
  app.get('/settings', WEB, async (_request, reply) => redirect(reply, CONNECTIONS));

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

  app.get<{ Querystring: { signedOut?: string } }>('/sign-in', WEB, async (request, reply) => {
    if (await resumeSession(app.db, readCookie(request, SESSION_COOKIE))) {
      return redirect(reply, CONNECTIONS);
    }
    const notice = request.query.signedOut !== undefined ? 'You are signed out.' : undefined;
    return renderSignIn(request, reply, 200, notice ? { notice } : {});
  });

  app.post('/sign-in', WEB, async (request, reply) => {
    const email = formField(request, 'email').trim();
    const password = formField(request, 'password');
    const expected = readCookie(request, SIGN_IN_COOKIE);
    if (crossSite(request) || !expected || !tokensMatch(formField(request, '_csrf'), expected)) {
      return renderSignIn(request, reply, 403, {
        email,
        error: 'The sign-in form had expired. Please sign in again.',
      });
    }
    // Per address, and per account and address (src/modules/sessions/throttle.ts).
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
      email && password ? await authenticate(app.db, email, password) : { user: null };
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
    return redirect(reply, user.mustChangePassword ? PASSWORD : CONNECTIONS);
  });

  app.post('/sign-out', signedInPost, async (request, reply) => {
    const signed = request.signed;
    if (signed) await endSession(app.db, signed.sessionId);
    cookie(request, reply, SESSION_COOKIE, '');
    return redirect(reply, `${SIGN_IN}?signedOut`);
  });

  // --- first sign-in: choose a password -------------------------------------------------
  app.get('/password', signedIn, async (request, reply) => {
    const { user, csrfToken } = view(request);
    if (!user.mustChangePassword) return redirect(reply, CONNECTIONS);
    return sendPage(reply, 200, choosePasswordPage({ csrfToken, email: user.email }));
  });

  app.post('/password', signedInPost, async (request, reply) => {
    const { user, csrfToken } = view(request);
    if (!user.mustChangePassword) return redirect(reply, CONNECTIONS);
    const password = formField(request, 'password');
    const problem = passwordProblem(password, formField(request, 'confirmation'), user);
    const outcome = problem ? null : await chooseNewPassword(app.db, user, password);
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
    return redirect(reply, CONNECTIONS);
  });

  // --- Settings → Connections ----------------------------------------------------------
  async function renderConnections(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { created?: NewKeyView; error?: string; name?: string } = {},
  ) {
    const base = view(request);
    // Last-used times are batched in memory; write them first so the list is current.
    await app.apiKeys.flushLastUsed();
    const keys = await listOrganizationApiKeys(app.db, base.organization.slug);
    const choices = await keyChoices(app.db, base.organization.id);
    const query = (request.query ?? {}) as { revoked?: unknown; [RESENT]?: unknown };
    const revoked = keys.find((key) => key.id === query.revoked && key.revokedAt !== null);
    const resent = query[RESENT] !== undefined;
    const apiBase = originOf(request);
    return sendPage(
      reply,
      status,
      connectionsPage({ ...base, ...extra, keys, revoked, resent, apiBase, choices }),
    );
  }

  app.get('/settings/connections', signedIn, async (request, reply) => {
    // The secret of a key generated by the post that redirected here: this one time only.
    const created = await takeOneView<NewKeyView>(app.db, signedOf(request).sessionId);
    return renderConnections(request, reply, 200, created ? { created } : {});
  });

  app.post('/settings/connections/keys', signedInPost, async (request, reply) => {
    const { organization, user } = view(request);
    const name = formField(request, 'name');
    try {
      // The service refuses when the organisation does not allow generating keys: the
      // same rule for this page, a direct post and `compplan keys create`.
      const created = await createApiKey(
        app.db,
        { org: organization.slug, name, ...restrictionsOf(request) },
        Date.now(),
        actorOf(request),
      );
      request.log.info({ keyId: created.id, userId: user.id }, 'API key generated');
      // POST/redirect/GET: reloading the page that shows the key cannot send the form
      // again. The secret waits, sealed, for that one page (sessions/one-time-view.ts).
      const shown: NewKeyView = { name: created.name, key: created.key };
      await keepForOneView(app.db, signedOf(request).sessionId, shown);
      return redirect(reply, CONNECTIONS);
    } catch (error) {
      if (!(error instanceof KeyManagementError)) throw error;
      const current = await findOrganizationById(app.db, organization.id);
      if (current && request.signed) request.signed.organization = current;
      if (current && !current.apiKeysEnabled) {
        request.log.warn({ userId: user.id }, 'API key generation refused: not allowed');
        return renderConnections(request, reply, 403, {
          error: 'No API key was generated: the organisation does not allow generating API keys.',
        });
      }
      return renderConnections(request, reply, 422, { error: formMessage(error.message), name });
    }
  });

  async function keyOfOrganization(request: FastifyRequest) {
    const { id } = request.params as { id: string };
    const key = await findApiKey(app.db, id);
    return key && key.organizationId === view(request).organization.id ? key : undefined;
  }

  app.get('/settings/connections/keys/:id/revoke', signedIn, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return sendPage(reply, 404, notFoundPage());
    if (key.revokedAt !== null) return redirect(reply, CONNECTIONS);
    return sendPage(reply, 200, revokePage({ ...view(request), key }));
  });

  app.post('/settings/connections/keys/:id/revoke', signedInPost, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return sendPage(reply, 404, notFoundPage());
    await revokeApiKeyById(app.db, key.id, actorOf(request));
    request.log.info({ keyId: key.id, userId: view(request).user.id }, 'API key revoked');
    return redirect(reply, `${CONNECTIONS}?revoked=${encodeURIComponent(key.id)}`);
  });

  app.get('/settings/connections/keys/:id/roll', signedIn, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return sendPage(reply, 404, notFoundPage());
    if (key.revokedAt !== null) return redirect(reply, CONNECTIONS);
    return sendPage(reply, 200, rollPage({ ...view(request), key }));
  });

  app.post('/settings/connections/keys/:id/roll', signedInPost, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return sendPage(reply, 404, notFoundPage());
    try {
      const rolled = await rollApiKeyById(
        app.db,
        key.id,
        formField(request, 'grace'),
        Date.now(),
        actorOf(request),
      );
      request.log.info({ keyId: key.id, userId: view(request).user.id }, 'API key rolled');
      // POST/redirect/GET, as for a generated key: the new secret shown once, sealed.
      const shown: NewKeyView = {
        name: rolled.name,
        key: rolled.key,
        rolledUntil: rolled.previousSecretExpiresAt,
      };
      await keepForOneView(app.db, signedOf(request).sessionId, shown);
      return redirect(reply, CONNECTIONS);
    } catch (error) {
      if (!(error instanceof KeyManagementError)) throw error;
      return renderConnections(request, reply, 422, { error: formMessage(error.message) });
    }
  });

  // --- Settings → Connections → Webhooks, Users, Data ----------------------------------
  const pages: PageContext = {
    signedIn,
    signedInPost,
    view,
    sessionIdOf: (request) => signedOf(request).sessionId,
    notFound: (reply) => sendPage(reply, 404, notFoundPage()),
    resentFlag: RESENT,
    actorOf,
  };
  registerWebhookPages(app, { ...pages, config: options.webhooks });
  registerUserPages(app, pages);
  const staging = new UploadStaging();
  app.addHook('onClose', () => staging.close());
  registerDataPages(app, pages, {
    staging,
    changeRetentionDays: options.changeRetentionDays,
    // SQLite: a connection of its own for the import's one long transaction, as the command
    // line has, so that the server's connection goes on answering meanwhile. PostgreSQL's
    // long work has its own pool already.
    withImportDatabase: async (work) => {
      const config = options.databaseConfig;
      if (config.dialect !== 'sqlite' || config.path === ':memory:') return work(app.database);
      const own = openDatabase(config);
      try {
        return await work(own);
      } finally {
        await own.close();
      }
    },
    formTokenOk: (request, token) => {
      const signed = request.signed;
      return !!signed && !crossSite(request) && tokensMatch(token, signed.session.csrfToken);
    },
  });

  // --- Settings → Audit log ------------------------------------------------------------
  registerAuditPages(app, { signedIn, view });

  // --- Settings → Roles & Permissions -------------------------------------------------
  app.get<{ Querystring: { saved?: string; [RESENT]?: string } }>(
    '/settings/roles',
    signedIn,
    async (request, reply) =>
      sendPage(
        reply,
        200,
        rolesPage({
          ...view(request),
          saved: request.query.saved !== undefined,
          resent: request.query[RESENT] !== undefined,
        }),
      ),
  );

  app.post('/settings/roles', signedInPost, async (request, reply) => {
    const base = view(request);
    if (base.user.role !== 'owner') {
      request.log.warn({ userId: base.user.id }, 'permission change refused: not an owner');
      return sendPage(
        reply,
        403,
        rolesPage({ ...base, error: 'Only an owner can change permissions.' }),
      );
    }
    const allow = formField(request, 'allowAdministratorsToGenerateApiKeys') === 'on';
    // The same setting `compplan orgs set SLUG --api-keys enabled|disabled` changes.
    await changeApiKeysSetting(app.db, base.organization.id, allow, actorOf(request));
    request.log.info({ userId: base.user.id, apiKeysEnabled: allow }, 'permission changed');
    return redirect(reply, `${ROLES}?saved`);
  });

  // --- pages that do not exist, and failures -------------------------------------------
  app.setNotFoundHandler((_request, reply) => sendPage(reply, 404, notFoundPage()));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'web request failed');
    return sendPage(
      reply,
      status,
      status === 500
        ? messagePage(
            'Something went wrong',
            `The page could not be shown. Try again in a moment; if it keeps happening, tell your administrator the request id ${request.id}.`,
          )
        : messagePage('The request could not be handled', error.message),
    );
  });
};

/** Browsers say when a request comes from another site; such a form post is refused. */
function crossSite(request: FastifyRequest): boolean {
  return request.headers['sec-fetch-site'] === 'cross-site';
}
