// The API is read-only: any other method on a path that exists answers 405 with
// `Allow: GET, HEAD` (docs/api-behaviour.md, "Methods"), instead of the 404 of a path
// that does not. Only the API's read-only paths are covered: a URL that also has a route
// for another method (a form of the web application) is left alone, and so is a route
// whose config says `methodNotAllowed: false`.
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { sendError } from '../http/error-handler.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: this GET route is not part of the read-only API; other methods get no 405. */
    methodNotAllowed?: boolean;
  }
}

const OTHER_METHODS: HTTPMethods[] = ['DELETE', 'OPTIONS', 'PATCH', 'POST', 'PUT'];
const READ_METHODS = new Set(['GET', 'HEAD']);

/** Collects the GET routes as they are registered; call `register` once they all are. */
export function methodNotAllowed(app: FastifyInstance) {
  const paths = new Set<string>();
  const writable = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some((method) => !READ_METHODS.has(method))) writable.add(route.url);
    else if (methods.includes('GET') && route.config?.methodNotAllowed !== false)
      paths.add(route.url);
  });
  return {
    register() {
      for (const url of paths) {
        if (writable.has(url)) continue;
        app.route({
          method: OTHER_METHODS,
          url,
          // A valid key sent with it is counted, as on the API's own methods.
          config: { countsKey: true },
          // Answered at onRequest, before any body is read: a PUT with a bad, oversized or
          // unsupported body still learns that the method is wrong, not that the body is.
          onRequest: async (request, reply) =>
            sendError(
              request,
              reply.header('allow', 'GET, HEAD'),
              405,
              `Method ${request.method} is not allowed: this API is read-only (GET, HEAD)`,
            ),
          handler: async () => undefined,
        });
      }
    },
  };
}
