// The web application: GET / for browsers, and under /app sign-in, the first sign-in's
// password change and the Settings pages. Outside the API scope: no x-api-key, no API quota;
// a session cookie instead, and a CSRF token on every form post. Each page is a module of
// pages/ that registers its own routes with the PageContext made here; none imports another.
import multipart from '@fastify/multipart';
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { tokensMatch } from '../sessions/service.js';
import { serveAssets } from './assets.js';
import type { Page, PageContext, PageSettings } from './context.js';
import {
  acceptForms,
  addSecurityHeaders,
  readCookie,
  redirect,
  SESSION_COOKIE,
  sendPage,
} from './http.js';
import { messagePage, notFoundPage } from './layout.js';
import { auditLogPages } from './pages/audit-log.js';
import { connectionsPages } from './pages/connections.js';
import { dataPages } from './pages/data.js';
import { helpPages } from './pages/help.js';
import { homePages } from './pages/home.js';
import { rolesPages } from './pages/roles.js';
import { signInPages } from './pages/sign-in.js';
import { usersPages } from './pages/users.js';
import { webhooksPages } from './pages/webhooks.js';
import { PAGES } from './paths.js';
import { crossSite, sessionChecks, userActor } from './session.js';

// The pages under /app, in the order their routes are registered (none depends on another).
const APP_PAGES: readonly Page[] = [
  signInPages,
  connectionsPages,
  webhooksPages,
  rolesPages,
  usersPages,
  dataPages,
  auditLogPages,
  helpPages,
];

export const webRoutes: FastifyPluginAsync<PageSettings> = async (app, settings) => {
  const context = pageContext(app, settings);
  // GET / is the server's front door, outside /app.
  homePages(app, context);
  await app.register(
    async (scope) => {
      acceptForms(scope);
      // Uploads (Settings → Data) are read part by part as they arrive, never whole.
      await scope.register(multipart, { throwFileSizeLimit: true });
      addSecurityHeaders(scope);
      scope.decorateRequest('signed', null);
      serveAssets(scope, context.open);
      // The entry points.
      scope.get('/', context.open, async (request, reply) =>
        redirect(reply, readCookie(request, SESSION_COOKIE) ? PAGES.connections : PAGES.signIn),
      );
      scope.get('/settings', context.open, async (_request, reply) =>
        redirect(reply, PAGES.connections),
      );
      for (const page of APP_PAGES) page(scope, context);
      // Pages that do not exist, and failures.
      scope.setNotFoundHandler((_request, reply) => sendPage(reply, 404, notFoundPage()));
      scope.setErrorHandler((error: FastifyError, request, reply) => {
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
    },
    { prefix: '/app' },
  );
};

function pageContext(app: FastifyInstance, settings: PageSettings): PageContext {
  // The web application's routes are outside the read-only API: its 405 answers are not
  // theirs (plugins/method-not-allowed.ts), and the OpenAPI document does not list them.
  const open = { config: { methodNotAllowed: false }, schema: { hide: true } };
  // The shared preHandlers, in this order: the session, then the form post's CSRF token.
  const { requireSignedIn, requireCsrfToken } = sessionChecks(app);
  const signedOf = (request: FastifyRequest) => {
    if (!request.signed) throw new Error('a signed-in request was expected');
    return request.signed;
  };
  const view: PageContext['view'] = (request) => {
    const signed = signedOf(request);
    return {
      user: signed.session.user,
      organization: signed.organization,
      csrfToken: signed.session.csrfToken,
    };
  };
  return {
    open,
    signedIn: { ...open, preHandler: [requireSignedIn] },
    signedInPost: { ...open, preHandler: [requireSignedIn, requireCsrfToken] },
    view,
    sessionIdOf: (request) => signedOf(request).sessionId,
    actorOf: (request) => userActor(view(request).user, request),
    formTokenOk: (request, token) => {
      const signed = request.signed;
      return !!signed && !crossSite(request) && tokensMatch(token, signed.session.csrfToken);
    },
    notFound: (reply: FastifyReply) => sendPage(reply, 404, notFoundPage()),
    settings,
  };
}
