// The API reference at /docs: Swagger UI over the app's own OpenAPI document, fully
// offline (every asset comes from the @fastify/swagger-ui package or from here; no CDN, no
// web fonts, no online validator), with try-it-out against this server and an x-api-key
// field under Authorize. A Content-Security-Policy that allows only this origin keeps it
// that way.
//
// Dressed as compplan rather than as stock Swagger UI: the base layout (no top bar with
// its "Explore" field for loading other documents), compplan's name, icon and colours (the
// web application's, assets.ts), and a bar above the reference that leads back to /app.
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { BRAND_CSS, FONT_STACK, ICON_SVG, MONO_STACK, THEME_VARIABLES } from '../web/assets.js';
import { brand } from '../web/layout.js';
import { DOCS_PREFIX } from './openapi.js';

const BAR = `<a class="docs-home" href="/app" title="The compplan web application">${brand().text}</a>
<span class="docs-page-name">API reference</span>
<nav class="docs-links" aria-label="compplan"><a href="/app">Web application</a><a href="/openapi.json">OpenAPI document</a></nav>`;

// Runs after Swagger UI's own scripts; the bar is plain markup made here, nothing from the
// document is put into it.
const SCRIPT = `'use strict';
(() => {
  const bar = document.createElement('header');
  bar.className = 'docs-bar';
  bar.innerHTML = ${JSON.stringify(BAR)};
  document.body.prepend(bar);
})();
`;

// Swagger UI's own classes, recoloured: links, the GET operations, Authorize and Execute
// in compplan's blue; the page on compplan's background with the system font.
const STYLE = `${THEME_VARIABLES}
${BRAND_CSS}
body { margin: 0; background: var(--bg); color: var(--ink); font-family: ${FONT_STACK}; }
.docs-bar {
  display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem;
  padding: 0.6rem 1.5rem; background: var(--panel); border-bottom: 1px solid var(--line);
}
.docs-home { text-decoration: none; }
.docs-page-name { color: var(--ink-soft); padding-left: 1rem; border-left: 1px solid var(--line); }
.docs-links { margin-left: auto; display: flex; gap: 1rem; }
.docs-links a { color: var(--brand); font-weight: 600; text-decoration: none; }
.docs-links a:hover { color: var(--brand-dark); text-decoration: underline; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.swagger-ui, .swagger-ui .info .title, .swagger-ui .opblock-tag, .swagger-ui .opblock .opblock-summary-description,
.swagger-ui .btn, .swagger-ui select, .swagger-ui input, .swagger-ui textarea,
.swagger-ui table thead tr th, .swagger-ui .parameter__name, .swagger-ui .response-col_status,
.swagger-ui .model-title, .swagger-ui .info p, .swagger-ui .info li, .swagger-ui .markdown p { font-family: ${FONT_STACK}; }
.swagger-ui .info .title, .swagger-ui .opblock-tag { color: var(--ink); }
.swagger-ui code, .swagger-ui .opblock-summary-path, .swagger-ui .highlight-code pre { font-family: ${MONO_STACK}; }
.swagger-ui a, .swagger-ui .info a, .swagger-ui .info .link { color: var(--brand); }
.swagger-ui .info .title small.version-stamp { background: var(--brand); }
.swagger-ui .scheme-container { background: var(--panel); box-shadow: none; border-bottom: 1px solid var(--line); }
.swagger-ui .btn.authorize { color: var(--brand); border-color: var(--brand); }
.swagger-ui .btn.authorize svg { fill: var(--brand); }
.swagger-ui .btn.execute { background: var(--brand); border-color: var(--brand); }
.swagger-ui .opblock.opblock-get { background: var(--brand-soft); border-color: var(--brand); }
.swagger-ui .opblock.opblock-get .opblock-summary { border-color: var(--brand); }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: var(--brand); }
.swagger-ui .opblock.opblock-get .tab-header .tab-item.active h4 span::after { background: var(--brand); }
.swagger-ui .markdown code, .swagger-ui .renderedMarkdown code { color: var(--brand-dark); background: var(--brand-soft); }
/* A phone: the bar's links under the name; a tag's description under the tag, not squeezed
   beside it one letter a line. */
@media (max-width: 40rem) {
  .docs-bar { padding: 0.6rem 1rem; }
  .docs-links { margin-left: 0; width: 100%; }
  .swagger-ui .info .title { font-size: 1.6rem; }
  .swagger-ui .opblock-tag { flex-wrap: wrap; font-size: 1.3rem; }
  .swagger-ui .opblock-tag small { order: 3; flex: 1 0 100%; padding: 0.25rem 0 0; }
}
`;

export default fp(
  async (app) => {
    await app.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      // Only this origin: what the package's default allows from https: (fonts, styles)
      // and validator.swagger.io (images) is not needed offline.
      staticCSP: [
        "default-src 'self'",
        "base-uri 'self'",
        "connect-src 'self'",
        "font-src 'self' data:",
        "frame-ancestors 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "script-src 'self'",
        "script-src-attr 'none'",
        "style-src 'self' 'unsafe-inline'",
        "form-action 'self'",
      ].join('; '),
      theme: {
        title: 'compplan API reference',
        css: [{ filename: 'compplan.css', content: STYLE }],
        js: [{ filename: 'compplan.js', content: SCRIPT }],
        favicon: [
          {
            filename: 'compplan.svg',
            rel: 'icon',
            type: 'image/svg+xml',
            sizes: 'any',
            content: ICON_SVG,
          },
        ],
      },
      uiConfig: {
        // No top bar: its "Explore" field would load other documents into the page.
        layout: 'BaseLayout',
        tryItOutEnabled: true,
        persistAuthorization: false,
        displayRequestDuration: true,
        docExpansion: 'list',
        defaultModelsExpandDepth: 0,
      },
      // The document names a local server; the page calls whichever server serves it.
      transformSpecificationClone: true,
      transformSpecification: (document) => {
        const { servers: _servers, ...sameOrigin } = document;
        return sameOrigin;
      },
    });
  },
  { name: 'docs-page', dependencies: ['openapi'] },
);
