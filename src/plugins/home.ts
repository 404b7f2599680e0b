// GET / — the server's front door. A browser (its Accept header prefers text/html) gets a
// small page leading to the reference (/docs), the web application (/app) and a first curl
// line; any other client (curl's */*, application/json, no Accept) keeps the API's JSON
// 404, so that nothing a program relied on changes (docs/api-behaviour.md).
import type { FastifyPluginAsync } from 'fastify';
import Negotiator from 'negotiator';
import { originOf, sendPage } from '../modules/web/http.js';
import { homePage } from '../modules/web/views.js';

// Without Accept a client takes anything, and gets the JSON (the first offered).
const wantsPage = (accept: string | undefined) =>
  accept !== undefined &&
  new Negotiator({ headers: { accept } }).mediaType(['application/json', 'text/html']) ===
    'text/html';

export const homeRoutes: FastifyPluginAsync = async (app) => {
  // Not part of the read-only API: no 405 for other methods, not in the OpenAPI document.
  const options = { config: { methodNotAllowed: false }, schema: { hide: true } };
  app.get('/', options, async (request, reply) => {
    // The answer depends on Accept: a cache must not give the page to a program.
    reply.header('vary', 'Accept');
    if (!wantsPage(request.headers.accept)) return reply.callNotFound();
    return sendPage(reply, 200, homePage(originOf(request)));
  });
};
