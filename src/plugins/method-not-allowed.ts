// The API is read-only: any other method on a path that exists answers 405 with
// `Allow: GET, HEAD` (decisions.md), instead of the 404 of a path that does not.
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { sendError } from './error-handler.js';

const OTHER_METHODS: HTTPMethods[] = ['DELETE', 'OPTIONS', 'PATCH', 'POST', 'PUT'];

/** Collects the GET routes as they are registered; call `register` once they all are. */
export function methodNotAllowed(app: FastifyInstance) {
  const paths = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) paths.add(route.url);
  });
  return {
    register() {
      for (const url of paths) {
        app.route({
          method: OTHER_METHODS,
          url,
          handler: (request, reply) =>
            sendError(
              request,
              reply.header('allow', 'GET, HEAD'),
              405,
              `Method ${request.method} is not allowed: this API is read-only (GET, HEAD)`,
            ),
        });
      }
    },
  };
}
