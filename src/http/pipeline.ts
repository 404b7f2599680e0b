// The order of work on every request, in one place (docs/api-behaviour.md, "The request
// pipeline"). Each step is a small function with one job, in the module named beside it;
// a step that does not apply to a route returns at once. Registered at the root before
// any route, so every route — and the 404 of a path that does not exist — runs them, in
// this order:
//
//   onRequest   1. check       request id, URL length, Host                 (below)
//               2. authenticate the key, when the route needs or is sent one (plugins/authentication.ts)
//               3. take quota  one request from the key's quota; 429 when spent (rate-limit/)
//               4. cached      a kept answer of a cacheable API route is sent (response-cache.ts)
//   preHandler  5. take turn   a fair turn at the PostgreSQL pool (db/fair-turns.ts)
//   handler        build       the route validates its query and reads the database
//   onSend      6. end turn
//               7. keep        a built answer is kept for the next request (response-cache.ts)
//               8. tag         ETag, and 304 for If-None-Match, refunding the quota (etag.ts)
//               9. label       RateLimit and X-RateLimit-* of the quota as it now stands
//              10. secure      the JSON security headers (plugins/security-headers.ts)
//              11. compress    when the client accepts an encoding (compression.ts)
//   onResponse 12. record      one access log line and the request metrics
//
// The key's quota is taken before any work and labels every answer of a request that
// carried a valid key, whatever its status: 200, 304, 404 of an unknown path, 405, 422,
// 429 (decisions.md, "Rate limit").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type EndTurn, FairTurns } from '../db/fair-turns.js';
import { authenticate } from '../plugins/authentication.js';
import { sendError } from '../plugins/error-handler.js';
import { secureJson } from '../plugins/security-headers.js';
import { type Quota, sendQuotaSpent } from '../rate-limit/plugin.js';
import { compress } from './compression.js';
import { conditionalGet } from './etag.js';
import { responseCache } from './response-cache.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route of the API (set for every route of src/modules/api.ts): needs a key. */
    api?: boolean;
    /** false: an API route that reads no database (ping) takes no turn at the pool. */
    readsDatabase?: boolean;
  }
  interface FastifyRequest {
    /** The key's quota as this request took it; undefined without a valid key. */
    quota: Quota | undefined;
    /** Ends this request's turn at the pool; undefined when it took none. */
    endTurn: EndTurn | undefined;
  }
}

// A request id from a trusted proxy is kept (so one id follows a request through the
// load balancer); anything that is not a short plain token is replaced.
export const REQUEST_ID_SHAPE = /^[\w.:-]{1,128}$/;
// How long a request may wait for a turn at the pool: the database's statement timeout.
const MAX_TURN_WAIT_MS = 5_000;

export interface PipelineOptions {
  /** Longer URLs: 414 (app.ts says why the bound is what it is). */
  maxUrlLength: number;
}

export function registerRequestPipeline(app: FastifyInstance, options: PipelineOptions): void {
  const cache = responseCache(app);
  const { poolSize } = app.database;
  const turns =
    poolSize === undefined
      ? undefined
      : new FairTurns({
          capacity: poolSize,
          maxWaitMs: MAX_TURN_WAIT_MS,
        });
  app.decorateRequest('quota', undefined);
  app.decorateRequest('endTurn', undefined);

  // 1. check
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if ((request.raw.url ?? '').length > options.maxUrlLength) {
      return sendError(request, reply, 414, 'URI Too Long');
    }
    // HTTP/1.1 requires Host (RFC 9112 section 3.2); Node's own check answers without a body.
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return sendError(request, reply, 400, 'Bad Request: the Host header is missing');
    }
  });
  // 2. authenticate
  app.addHook('onRequest', authenticate);
  // 3. take quota
  app.addHook('onRequest', async function takeQuota(request, reply) {
    if (!request.apiKey) return;
    const quota = await app.rateLimits.takeKeyQuota(request.apiKey.id);
    request.quota = quota;
    if (quota.exceeded) {
      app.metrics.rateLimited.inc({ limit: 'key' });
      return sendQuotaSpent(reply, quota);
    }
  });
  // 4. cached
  app.addHook('onRequest', cache.answerFromCache);
  // 5. take turn
  if (turns) {
    app.addHook('preHandler', async (request, reply) => {
      const { config } = request.routeOptions;
      if (!config.api || config.readsDatabase === false || !request.apiKey) return;
      // No turn within MAX_TURN_WAIT_MS: 503 (the error handler adds Retry-After).
      request.endTurn = await turns.take(request.apiKey.id);
      // A client that leaves while its request runs still ends the turn.
      reply.raw.once('close', request.endTurn);
    });
  }
  // 6. end turn
  app.addHook('onSend', async (request, _reply, payload) => {
    request.endTurn?.();
    return payload;
  });
  // 7. keep
  app.addHook('onSend', cache.keepAnswer);
  // 8. tag
  app.addHook('onSend', conditionalGet);
  // 9. label
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    if (request.quota) reply.headers(app.rateLimits.headers(request.quota));
    return payload;
  });
  // 10. secure
  app.addHook('onSend', secureJson);
  // 11. compress
  app.addHook('onSend', compress);
  // 12. record
  app.addHook('onResponse', async (request, reply) => {
    app.metrics.observeRequest(request, reply);
    request.log.info(
      { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request completed',
    );
  });
}
