// The matched route's config (`api`, `cacheAnswers`, …), read once per request: Fastify's
// `request.routeOptions` getter builds a new object of twelve fields on every read (about
// 0.6 µs here), and the pipeline's steps each need the config. A handler that passes its
// request to the 404 handler (reply.callNotFound, GET / for a program) keeps its own
// route's config here; no such route is an API route or caches answers.
import type { FastifyInstance, FastifyRequest } from 'fastify';

type RouteConfig = FastifyRequest['routeOptions']['config'];

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by routeConfigOf on first use; read it through routeConfigOf. */
    routeConfig: RouteConfig | undefined;
  }
}

/** Declares the request's slot for its route config (the pipeline calls it once). */
export function decorateRouteConfig(app: FastifyInstance): void {
  app.decorateRequest('routeConfig', undefined);
}

/** The config of the route that answers this request. */
export function routeConfigOf(request: FastifyRequest): RouteConfig {
  let config = request.routeConfig;
  if (config === undefined) {
    config = request.routeOptions.config;
    request.routeConfig = config;
  }
  return config;
}
