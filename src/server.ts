// Runs the API: migrations, the app, the listening sockets, and an orderly shutdown.
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { CreatedApiKey } from './api-keys/service.js';
import { buildApp } from './app.js';
import { type Config, localUrl } from './config.js';
import { openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { createLogger } from './logger.js';
import { listenForMetrics } from './metrics/server.js';

// In-flight requests get this long to finish after SIGTERM before the process exits.
const SHUTDOWN_GRACE_MS = 10_000;
// How long the server keeps accepting after SIGTERM, answering with Connection: close.
// Connections a client has opened but the server has not accepted yet wait in the
// kernel's queue, their requests already sent; closing the listening socket resets them.
// Under load they were seen waiting there for up to 300 ms (test/production/faults.test.ts).
const ACCEPT_GRACE_MS = 1_000;

export interface StartedServer {
  app: FastifyInstance;
  /** Where the API listens, e.g. http://127.0.0.1:3000. */
  url: string;
  /** Where Prometheus scrapes, when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** Set when --demo loaded the demo data just now. */
  demoKey: CreatedApiKey | undefined;
}

function urlOf(host: string, address: AddressInfo | string | null, fallbackPort: number): string {
  return localUrl(host, typeof address === 'object' && address ? address.port : fallbackPort);
}

export async function startServer(
  config: Config,
  options: { demo: boolean },
): Promise<StartedServer> {
  const logger = createLogger(config) as FastifyBaseLogger;
  const database = openDatabase(config.database, {
    // Only code and message: node-postgres attaches the whole client to such errors.
    onIdleError: (error) =>
      logger.warn(
        { code: (error as { code?: string }).code, reason: error.message },
        'database connection lost; it will be reopened',
      ),
    onFileModeTightened: ({ file, from }) =>
      logger.warn(
        { file, mode: from.toString(8).padStart(4, '0') },
        'the database file was readable by other users: made readable by its owner only',
      ),
  });
  let demoKey: CreatedApiKey | undefined;
  try {
    const applied = await migrateToLatest(database);
    if (applied.length > 0) logger.info({ migrations: applied }, 'applied database migrations');
    if (options.demo) {
      // Loaded only for the demo: its generator's data (faker) is about 16 MB of heap that
      // a server without --demo never needs.
      const { bootstrapDemo } = await import('./demo/bootstrap.js');
      demoKey = await bootstrapDemo(database);
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  const app = await buildApp({
    config,
    database,
    logger,
    serve: { deliverWebhooks: true, purgeAuditLog: true, auditWriterThread: true },
  });
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    // Hooks can only be added before the app listens.
    const metrics = await listenForMetrics(app.metrics.registry, config.metricsPort, config.host);
    app.addHook('onClose', (_instance, done) => {
      metrics.close(() => done());
    });
    metricsUrl = `${urlOf(config.host, metrics.address(), config.metricsPort)}/metrics`;
  }
  await app.listen({ port: config.port, host: config.host });
  return { app, url: urlOf(config.host, app.server.address(), config.port), metricsUrl, demoKey };
}

/** Closes the app on SIGTERM or SIGINT: stop accepting, finish in-flight requests, exit. */
export function closeOnSignals(app: FastifyInstance): void {
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('shutdown grace period over; exiting with requests still open');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    // From now on every answer closes its connection, and idle connections are closed
    // (src/http/drain.ts); the listening socket stays open a moment longer, and closes
    // (app.close() runs the drain's close first) once no answer is still being written.
    app.drain.begin();
    setTimeout(closeApp, ACCEPT_GRACE_MS);
  };
  const closeApp = () => {
    app.close().then(
      () => {
        app.log.info('shut down');
        process.exit(0);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
