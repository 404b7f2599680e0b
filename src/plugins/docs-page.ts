// The API reference at /docs: Swagger UI over the app's own OpenAPI document, fully
// offline (every asset comes from the @fastify/swagger-ui package or from here; no CDN, no
// web fonts, no online validator), with try-it-out against this server and an x-api-key
// field under Authorize. A Content-Security-Policy that allows only this origin keeps it
// that way.
//
// Dressed as compplan rather than as stock Swagger UI: the base layout (no top bar with
// its "Explore" field for loading other documents), compplan's name, icon and colours (the
// web application's, src/web/static/), and a bar above the reference that leads back to /app.
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { staticFile } from '../web/assets.js';
import { DOCS_PREFIX } from './openapi.js';

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
        // compplan's colours, fonts and mark (src/web/static/theme.css, the web application's),
        // then the reference's own (docs.css); the bar back to /app (docs.js).
        css: [
          {
            filename: 'compplan.css',
            content: `${staticFile('theme.css')}\n${staticFile('docs.css')}`,
          },
        ],
        js: [{ filename: 'compplan.js', content: staticFile('docs.js') }],
        favicon: [
          {
            filename: 'compplan.svg',
            rel: 'icon',
            type: 'image/svg+xml',
            sizes: 'any',
            content: staticFile('icon.svg'),
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
