// Runs the API: migrations, the app, the listening socket, and an orderly shutdown.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { bootstrapDemo } from './demo/bootstrap.js';
import type { CreatedApiKey } from './modules/api-keys/service.js';

// In-flight requests get this long to finish after SIGTERM before the process exits.
const SHUTDOWN_GRACE_MS = 10_000;

export interface StartedServer {
  app: FastifyInstance;
  /** Where the server listens, e.g. http://127.0.0.1:3000. */
  url: string;
  /** Set when --demo loaded the demo data just now. */
  demoKey: CreatedApiKey | undefined;
}

export async function startServer(
  config: Config,
  options: { demo: boolean },
): Promise<StartedServer> {
  const database = openDatabase(config.database);
  let demoKey: CreatedApiKey | undefined;
  try {
    await migrateToLatest(database);
    if (options.demo) demoKey = await bootstrapDemo(database);
  } catch (error) {
    await database.db.destroy();
    throw error;
  }
  const app = await buildApp({ config, database });
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return { app, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, demoKey };
}

/** Closes the app on SIGTERM or SIGINT: stop accepting, finish in-flight requests, exit. */
export function closeOnSignals(app: FastifyInstance): void {
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown grace period over; exiting with requests still open');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
