// The order of work on every request, in one place (docs/api-behaviour.md, "The request
// pipeline"). Each step is a small function with one job, in the module named beside it;
// a step that does not apply to a route returns at once. Registered at the root before
// any route, so every route — and the 404 of a path that does not exist — runs them. Each
// Fastify hook below runs its steps in this order (one hook per phase: a hook is a
// promise and a turn of the event loop's microtasks, a step a function call):
//
//   onRequest   1. check       request id, OData-Version of the feed, URL length, Host (below)
//               2. authenticate the key, when the route needs or is sent one (authentication.ts)
//              2b. address     403 from outside the key's address allowlist (authentication.ts)
//               3. take quota  one request from the key's quota; 429 when spent (rate-limit.ts);
//                              a feed request waits up to 5 s for the next second's instead
//               4. cached      a kept answer of a cacheable API route is sent (response-cache.ts)
//   preHandler  5. take turn   a fair turn at the PostgreSQL pool (db/fair-turns.ts)
//   handler        build       the route validates its query and reads the database
//   onSend      6. end turn   (a streamed answer's turn ends when its response closes)
//               7. keep        a built answer is kept for the next request (response-cache.ts)
//               8. tag         ETag, and 304 for If-None-Match (etag.ts); a 304 gives its quota back
//               9. label       RateLimit and X-RateLimit-* of the quota as it now stands
//              10. secure      the JSON security headers (security-headers.ts)
//              11. compress    when the client accepts an encoding (compression.ts)
//   onResponse 12. record      one access log line and the request metrics
//              13. audit       the audit log's entry of a request with a valid key, kept for
//                              this instance's next batch: after the answer, off its path
//                              (audit.ts; the log itself: src/audit/); a streamed answer's
//                              when its response closes (taken in onSend), so that it
//                              counts what was sent, also to a client that left part-way
//                              (no onResponse runs then)
//
// A step of onRequest that answers (an error, a 429, a kept answer) returns the reply, and
// the hook returns it: Fastify then runs nothing more of the request but the onSend and
// onResponse steps of that answer.
//
// A streamed answer (the bulk download, src/modules/bulk/routes.ts) reads the database
// while it is sent, long after onSend: it keeps its turn at the pool until its response
// closes, tags itself from its snapshot (and answers 304 before reading a row) instead of
// being hashed whole by the tag step, is never kept, and is compressed as a stream.
//
// The key's quota is taken before any work and labels every answer of a request that
// carried a valid key, whatever its status: 200, 304, 404 of an unknown path, 405, 422,
// 429 (docs/api-behaviour.md, "Rate limits"). The audit log records every such answer, and
// the 403 of a key used from outside its allowlist, which takes no quota.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type EndTurn, FairTurns } from '../db/fair-turns.js';
import { accessLog } from '../logger.js';
import { authenticate, checkAddress } from './authentication.js';
import { compress } from './compression.js';
import { sendError } from './error-handler.js';
import { conditionalGet } from './etag.js';
import { FEED_PREFIX } from './odata-errors.js';
import { type Quota, sendQuotaSpent } from './rate-limit.js';
import { responseCache } from './response-cache.js';
import { decorateRouteConfig, routeConfigOf } from './route-config.js';
import { secureJson } from './security-headers.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route of the API (set for every route of src/modules/api.ts): needs a key. */
    api?: boolean;
    /** false: an API route that reads no database (ping) takes no turn at the pool. */
    readsDatabase?: boolean;
    /** The answer is a stream that reads the database as it is sent: see the top of this file. */
    streams?: boolean;
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

/**
 * How long a feed request over its key's quota waits for quota (docs/odata.md, "Quota"):
 * BI tools do not retry a 429, so it waits for the next second's rather than fail a refresh.
 */
export const FEED_QUOTA_WAIT_MS = 5_000;

export interface PipelineOptions {
  /** Longer URLs: 414 (app.ts says why the bound is what it is). */
  maxUrlLength: number;
}

export function registerRequestPipeline(app: FastifyInstance, options: PipelineOptions): void {
  const cache = responseCache(app);
  const { poolSize, bounds } = app.database;
  const turns =
    poolSize === undefined || bounds === undefined
      ? undefined
      : new FairTurns({ capacity: poolSize, maxWaitMs: bounds.turnWaitMs });
  decorateRouteConfig(app);
  app.decorateRequest('quota', undefined);
  app.decorateRequest('endTurn', undefined);

  /**
   * 1. check: the request id on every answer, and OData-Version on every answer of the
   * feed (its errors too); 414 and 400 for what no route may take.
   */
  function check(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    reply.header('x-request-id', request.id);
    if ((request.raw.url ?? '').startsWith(FEED_PREFIX)) reply.header('odata-version', '4.0');
    if ((request.raw.url ?? '').length > options.maxUrlLength) {
      return sendError(request, reply, 414, 'URI Too Long');
    }
    // HTTP/1.1 requires Host (RFC 9112 section 3.2); Node's own check answers without a body.
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return sendError(request, reply, 400, 'Bad Request: the Host header is missing');
    }
  }

  /**
   * 3. take quota: one request from the key's quota; 429 when it is spent. A feed request
   * asks again when the window turns, for at most FEED_QUOTA_WAIT_MS.
   */
  async function takeQuota(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> {
    if (!request.apiKey) return;
    const keyId = request.apiKey.id;
    let quota = await app.rateLimits.takeKeyQuota(keyId);
    if (quota.exceeded && routeConfigOf(request).feed) {
      const until = Date.now() + FEED_QUOTA_WAIT_MS;
      while (quota.exceeded && Date.now() + quota.resetsInMs <= until) {
        await sleep(Math.max(1, quota.resetsInMs));
        quota = await app.rateLimits.takeKeyQuota(keyId);
      }
    }
    request.quota = quota;
    if (quota.exceeded) {
      app.metrics.rateLimited.inc({ limit: 'key' });
      return sendQuotaSpent(reply, quota);
    }
  }

  /** 8. tag, its second half: a 304 gives its request back to the key's quota. */
  async function giveBackQuota(request: FastifyRequest): Promise<void> {
    if (!request.apiKey) return;
    request.quota = await app.rateLimits.refundKeyQuota(request.apiKey.id);
  }

  /** 9. label: RateLimit and X-RateLimit-* of the quota as it now stands. */
  function label(request: FastifyRequest, reply: FastifyReply): void {
    if (request.quota) app.rateLimits.label(reply, request.quota);
  }

  app.addHook('onRequest', async (request, reply) => {
    if (check(request, reply)) return reply; // 1.
    if (await authenticate(app, request, reply)) return reply; // 2.
    checkAddress(request); // 2b.
    if (await takeQuota(request, reply)) return reply; // 3.
    return cache.answerFromCache(request, reply); // 4.
  });
  // 5. take turn
  if (turns) {
    app.addHook('preHandler', async (request, reply) => {
      const config = routeConfigOf(request);
      if (!config.api || config.readsDatabase === false || !request.apiKey) return;
      // No turn within the bound (src/db/timeouts.ts): 503 (the error handler adds Retry-After).
      request.endTurn = await turns.take(request.apiKey.id);
      // A client that leaves while its request runs still ends the turn.
      reply.raw.once('close', request.endTurn);
    });
  }
  app.addHook('onSend', async (request, reply, payload) => {
    if (!routeConfigOf(request).streams)
      request.endTurn?.(); // 6. end turn
    else reply.raw.once('close', () => app.audit.recordRequest(request, reply)); // 13. audit
    let body = cache.keepAnswer(request, reply, payload); // 7. keep
    body = conditionalGet(request, reply, body); // 8. tag
    if (reply.statusCode === 304) await giveBackQuota(request);
    label(request, reply); // 9.
    secureJson(request, reply); // 10. secure
    return compress(request, reply, body); // 11. compress
  });
  // 12. record
  const writeAccessLine = accessLog(app.log);
  app.addHook('onResponse', (request, reply, done) => {
    app.metrics.observeRequest(request, reply);
    writeAccessLine(request, reply.statusCode, reply.elapsedTime);
    app.audit.recordRequest(request, reply); // 13. audit
    done();
  });
}
