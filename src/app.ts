// The application: a Fastify instance with every plugin and route, built from a Config
// and an open database. Only server.ts listens; tests build their own app per config.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { type Config, DEFAULT_WEBHOOK_CONFIG } from './config.js';
import type { DatabaseHandle } from './db/connect.js';
import audit from './http/audit.js';
import authentication from './http/authentication.js';
import { clientErrorHandler } from './http/client-errors.js';
import { type Drain, drainConnections } from './http/drain.js';
import errorHandler, { sendError } from './http/error-handler.js';
import { REQUEST_ID_SHAPE, registerRequestPipeline } from './http/pipeline.js';
import rateLimit from './http/rate-limit.js';
import { boundRequestReceipt } from './http/request-deadline.js';
import { API_RESPONSE_HEADERS } from './http/security-headers.js';
import { compiledSerializer } from './http/serializer.js';
import { createLogger } from './logger.js';
import metrics from './metrics/plugin.js';
import { apiRoutes } from './modules/api.js';
import { healthRoutes } from './modules/health/routes.js';
import { odataRoutes } from './odata/routes.js';
import cursors from './plugins/cursors.js';
import database from './plugins/database.js';
import docsPage from './plugins/docs-page.js';
import { methodNotAllowed } from './plugins/method-not-allowed.js';
import openapi from './plugins/openapi.js';
import signInThrottle from './sessions/throttle.js';
import { PASSWORD_HASHING, type PasswordHashing } from './users/password.js';
import { webRoutes } from './web/routes.js';
import webhooks from './webhooks/plugin.js';
import type { WebhookSchedule } from './webhooks/schedule.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** How the server lets go of its connections on shutdown (src/http/drain.ts). */
    drain: Drain;
  }
}

export interface AppOptions {
  /** What an operator sets (src/config.ts reads it from the environment). */
  config: Config;
  database: DatabaseHandle;
  /** The process's logger; one is made from the config when absent. */
  logger?: FastifyBaseLogger;
  /** The work `compplan serve` runs beside the routes; none when absent. */
  serve?: ServeWork;
  /** Test only: clocks, schedules, buffer sizes and timeouts a test moves by hand. */
  testing?: TestSettings;
}

/** What `compplan serve` runs beside answering requests (src/server.ts sets them all). */
export interface ServeWork {
  /** Runs a webhook dispatcher (src/webhooks); most tests need none. */
  deliverWebhooks?: boolean;
  /** Purges audit log entries past AUDIT_RETENTION_DAYS every hour. */
  purgeAuditLog?: boolean;
  /**
   * Writes the audit log's request entries in a thread of their own, with its own
   * connection (src/audit/writer-thread.ts).
   */
  auditWriterThread?: boolean;
}

/** What a test gives the app instead of the real clocks, schedules and bounds. */
export interface TestSettings {
  /** Where a logger made here writes; standard output when absent. Tests read it. */
  logStream?: NodeJS.WritableStream;
  /** The wall clock API key expiry is compared with; Date.now when absent. */
  now?: () => number;
  /**
   * The clock of how long a kept API key answer has gone unconfirmed (src/api-keys/
   * verifier.ts); performance.now() when absent.
   */
  monotonic?: () => number;
  /** The dispatcher's retry delays, lease and poll; the real schedule when absent. */
  webhookSchedule?: WebhookSchedule;
  /** The HTTP server's timeouts; SERVER_TIMEOUTS when absent. */
  timeouts?: Partial<ServerTimeouts>;
  /** How many audit entries are kept while the database refuses them. */
  auditBufferLimit?: number;
  /**
   * The scrypt cost of the password hashes the web application makes (PASSWORD_HASHING
   * when absent): a cheaper one keeps tests fast. Hashes of any cost verify.
   */
  passwordHashing?: PasswordHashing;
}

// Limits on what one client may send, and how slowly (OWASP API4). Every API request is a
// GET of a short URL with a handful of short headers, so each bound sits far above
// legitimate use and far below what would cost the server memory or a socket for long.

// Request line plus headers: Node's default, stated. A key is 46 characters and a cursor
// at most 2,048; 16 KiB leaves room for the web application's cookies and any proxy's
// headers. Larger: 431 (or 414 when the request line alone is too long).
const MAX_HEADER_BYTES = 16 * 1024;
// The whole URL. The longest useful API URL (a cursor of 2,048, a path with ids, every
// filter) is under 3 KiB; 8 KiB is also what nginx accepts by default in front
// (large_client_header_buffers 4 8k). Longer: 414, before any routing work.
const MAX_URL_LENGTH = 8 * 1024;
// Bodies: the API takes none and the web application's forms are small (16 KiB, set in its
// scope). 64 KiB bounds what any other route would buffer; larger: 413.
const BODY_LIMIT_BYTES = 64 * 1024;
/** How long the HTTP server waits for a slow or silent client. */
export interface ServerTimeouts {
  /** All of a request's headers must arrive within this of its start; else 408. */
  headersMs: number;
  /**
   * The whole request must arrive within this; else 408 (src/http/request-deadline.ts).
   * Not the web application's upload, timed by its progress (the two below).
   */
  requestMs: number;
  /** An upload that sends nothing this long is cut off (src/import/upload-pace.ts). */
  uploadIdleMs: number;
  /** An upload slower than this, over each uploadIdleMs, is cut off. */
  uploadMinBytesPerSecond: number;
  /** How often Node checks the headers, and request-deadline.ts the requests. */
  checkIntervalMs: number;
  /** A socket with no traffic this long mid-request is closed. */
  connectionMs: number;
  /** An idle kept-alive socket is closed after this. */
  keepAliveMs: number;
}

export const SERVER_TIMEOUTS: Readonly<ServerTimeouts> = Object.freeze({
  // A client must send all of its headers within 10 s of starting a request (a slowloris
  // trickle is cut here) and the whole request within 15 s; 408 and the socket is closed.
  headersMs: 10_000,
  requestMs: 15_000,
  // An upload (up to 100 MB) is timed by its progress instead: cut off after 30 s without
  // a byte, or when less than 16 KiB/s (128 kbit/s) arrived over the last 30 s. 100 MB
  // over a 2 Mbit/s office line takes about 7 minutes and is never cut; at the minimum
  // rate it would take 1 h 47 min, which the progress bar shows.
  uploadIdleMs: 30_000,
  uploadMinBytesPerSecond: 16 * 1024,
  // Node's default (30 s) would let a trickling client hold a socket up to 40 s instead of 10.
  checkIntervalMs: 1_000,
  // A socket with no traffic for 30 s mid-request (a client that stopped reading its
  // response, or went silent) is closed. Above the slowest legitimate answer: PostgreSQL
  // gets 3 s to connect and 5 s per statement before the request fails with 503/504.
  connectionMs: 30_000,
  // Idle keep-alive sockets: longer than nginx's upstream keepalive_timeout (60 s,
  // deploy/nginx.conf), so that the proxy always closes an idle connection first and never
  // sends a request on a socket this server is closing.
  keepAliveMs: 72_000,
});

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, serve = {}, testing = {} } = options;
  const webhookConfig = config.webhooks ?? DEFAULT_WEBHOOK_CONFIG;
  const timeouts = { ...SERVER_TIMEOUTS, ...testing.timeouts };
  const app = Fastify({
    loggerInstance:
      options.logger ?? (createLogger(config, testing.logStream) as FastifyBaseLogger),
    requestIdHeader: false,
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      // One access line per request, written by the pipeline's record step, instead of
      // Fastify's two.
      disableRequestLogging: true,
    }),
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_SHAPE.test(given) ? given : randomUUID();
    },
    // Behind a reverse proxy, the client address and protocol come from X-Forwarded-*,
    // but only from the proxies named in TRUST_PROXY.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy.join(',') : false,
    // On shutdown, a request that still arrives on an open connection is served (the
    // client sent it to a live server); src/http/drain.ts closes the connection after it.
    return503OnClosing: false,
    // Connections are let go by src/http/drain.ts (a preClose hook below), not by Fastify.
    forceCloseConnections: false,
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: timeouts.headersMs,
      // The whole-request bound is request-deadline.ts's (below), which the upload route,
      // timed by its progress instead, is left out of.
      requestTimeout: 0,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
      // Checked below instead, so that a request without Host gets the JSON error body.
      requireHostHeader: false,
    },
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: 0,
    connectionTimeout: timeouts.connectionMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    clientErrorHandler: clientErrorHandler(MAX_URL_LENGTH),
    // The router itself never refuses a long path parameter (its default bound is 100
    // characters): the route is found, so the request goes through the pipeline (its
    // key checked and counted, the quota headers on the answer) and the route answers
    // what it answers any unknown id. Only the URL's length is bounded, by the check step.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    frameworkErrors: (_error, request, reply) => {
      // Answered outside every route context: no onSend hook adds the API's headers here.
      reply.header('x-request-id', request.id).headers(API_RESPONSE_HEADERS);
      if ((request.raw.url ?? '').length > MAX_URL_LENGTH)
        return sendError(request, reply, 414, 'URI Too Long');
      return sendError(request, reply, 400, 'Malformed URL');
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(compiledSerializer);
  app.decorate('drain', drainConnections(app.server));
  // First among the preClose hooks: every answer is delivered and every connection closed
  // before Fastify's own server.close() (which would cut answers still being written) and
  // before the plugins let go of the database.
  app.addHook('preClose', () => app.drain.close());
  // The first onRequest hook: a request's body arrives within timeouts.requestMs, except
  // on the routes timed by their progress (the web application's upload).
  boundRequestReceipt(app, timeouts);
  await app.register(errorHandler);
  await app.register(database, { database: options.database });
  await app.register(cursors);
  await app.register(rateLimit, { config });
  await app.register(metrics);
  if (serve.deliverWebhooks) {
    await app.register(webhooks, {
      config: webhookConfig,
      ...(testing.webhookSchedule && { schedule: testing.webhookSchedule }),
    });
  }
  await app.register(authentication, {
    ...(testing.now && { now: testing.now }),
    ...(testing.monotonic && { monotonic: testing.monotonic }),
  });
  await app.register(audit, {
    writerThread: serve.auditWriterThread === true ? config.database : undefined,
    retentionDays: config.auditRetentionDays,
    purge: serve.purgeAuditLog === true,
    offForBenchmark: config.auditLogOffForBenchmark,
    maxBuffered: testing.auditBufferLimit,
  });
  // Every step a request goes through, in order, before any route is registered.
  registerRequestPipeline(app, { maxUrlLength: MAX_URL_LENGTH });
  // Collects every read-only route from here on, /openapi.json and /docs included.
  const notAllowed = methodNotAllowed(app);
  // Before the routes: the document is collected as they are registered.
  await app.register(openapi);
  await app.register(docsPage);
  await app.register(healthRoutes);
  await app.register(apiRoutes, {
    now: testing.now ?? Date.now,
    changeRetentionDays: config.changeRetentionDays,
  });
  await app.register(odataRoutes);
  await app.register(signInThrottle);
  // The web application (GET / for browsers, sign-in and Settings under /app): outside the
  // API scope, no key, no API quota.
  await app.register(webRoutes, {
    uploadPace: {
      idleMs: timeouts.uploadIdleMs,
      minBytesPerSecond: timeouts.uploadMinBytesPerSecond,
      checkIntervalMs: timeouts.checkIntervalMs,
    },
    webhooks: webhookConfig,
    changeRetentionDays: config.changeRetentionDays,
    passwordHashing: testing.passwordHashing ?? PASSWORD_HASHING,
  });
  notAllowed.register();
  return app;
}
