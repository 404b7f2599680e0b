// The API reference at /docs: Swagger UI over the app's own OpenAPI document, fully
// offline (every asset comes from the @fastify/swagger-ui package; no CDN, no web fonts,
// no online validator), with try-it-out against this server and an x-api-key field under
// Authorize. A Content-Security-Policy that allows only this origin keeps it that way.
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { DOCS_PREFIX } from './openapi.js';

// The page's logo, inline, so that nothing is fetched for it.
const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40"><text x="0" y="29" font-family="sans-serif" font-size="26" font-weight="700" fill="#ffffff">compplan</text></svg>`;

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
      logo: { type: 'image/svg+xml', content: Buffer.from(LOGO) },
      theme: { title: 'compplan API reference' },
      uiConfig: {
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
