// GET / — the server's front door. A browser (its Accept header prefers text/html) gets a
// small page leading to the reference (/docs), the web application (/app) and a first curl
// line; any other client (curl's */*, application/json, no Accept) keeps the API's JSON
// 404, so that nothing a program relied on changes (docs/api-behaviour.md).
import Negotiator from 'negotiator';
import type { Page } from '../context.js';
import { html } from '../html.js';
import { originOf, sendPage } from '../http.js';
import { copyableCode, singleCard } from '../layout.js';

// Without Accept a client takes anything, and gets the JSON (the first offered).
const wantsPage = (accept: string | undefined) =>
  accept !== undefined &&
  new Negotiator({ headers: { accept } }).mediaType(['application/json', 'text/html']) ===
    'text/html';

/** Registered outside /app, at the server's root (routes.ts). */
export const homePages: Page = (app, context) => {
  app.get('/', context.open, async (request, reply) => {
    // The answer depends on Accept: a cache must not give the page to a program.
    reply.header('vary', 'Accept');
    if (!wantsPage(request.headers.accept)) return reply.callNotFound();
    return sendPage(reply, 200, homePage(originOf(request)));
  });
};

/** GET / for a browser: where to go from here. `origin` is this server as the browser sees it. */
function homePage(origin: string): string {
  return singleCard(
    'Compensation Planning API',
    html`<p class="lead">This server answers the read-only Compensation Planning External API: merit cycles, their employees and exchange rates, for analytics, HRIS and BI tools.</p>
<ul class="link-list">
  <li><a href="/docs">API reference</a><span class="hint">Every endpoint, parameter and error; try them out with your key.</span></li>
  <li><a href="/app">Web application</a><span class="hint">Sign in and generate an API key under Settings → Connections.</span></li>
  <li><a href="/openapi.json">OpenAPI document</a><span class="hint">For code generators, Postman or an API gateway.</span></li>
</ul>
<h2>Try it</h2>
<p>With your key in place of <code>cpk_…</code>; the answer is <code>{"message":"pong"}</code>.</p>
${copyableCode('try-ping', `curl -H "x-api-key: cpk_…" ${origin}/ping`)}`,
    'card-wide',
  );
}
