// The application: a Fastify instance with every plugin and route, built from a Config
// and an open database. Only server.ts listens; tests build their own app per config.
import { randomUUID } from 'node:crypto';
import compress from '@fastify/compress';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import {
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/connect.js';
import { createLogger } from './logger.js';
import metrics from './metrics/plugin.js';
import { apiRoutes } from './modules/api.js';
import { healthRoutes } from './modules/health/routes.js';
import authentication from './plugins/authentication.js';
import cursors from './plugins/cursors.js';
import database from './plugins/database.js';
import errorHandler, { sendError } from './plugins/error-handler.js';
import { methodNotAllowed } from './plugins/method-not-allowed.js';
import rateLimit from './rate-limit/plugin.js';

export interface AppOptions {
  config: Config;
  database: DatabaseHandle;
  /** The process's logger; one is made from the config when absent. */
  logger?: FastifyBaseLogger;
  /** Where a logger made here writes; standard output when absent. Tests read it. */
  logStream?: NodeJS.WritableStream;
}

// A request id from a trusted proxy is kept (so one id follows a request through the
// load balancer); anything that is not a short plain token is replaced.
const REQUEST_ID_SHAPE = /^[\w.:-]{1,128}$/;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    loggerInstance:
      options.logger ?? (createLogger(config, options.logStream) as FastifyBaseLogger),
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_SHAPE.test(given) ? given : randomUUID();
    },
    // On shutdown, requests in flight finish; new ones on kept-alive sockets get 503.
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      // An over-long path parameter cannot name anything that exists.
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
        return sendError(request, reply, 404, 'Not found');
      return sendError(request, reply, 400, 'Malformed URL');
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await app.register(errorHandler);
  await app.register(database, { database: options.database });
  await app.register(cursors);
  await app.register(compress, { global: true });
  await app.register(rateLimit, { config });
  await app.register(metrics);
  await app.register(authentication);

  const notAllowed = methodNotAllowed(app);
  await app.register(healthRoutes);
  await app.register(apiRoutes);
  notAllowed.register();
  return app;
}
