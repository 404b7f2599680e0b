// The application: a Fastify instance with every plugin and route, built from a Config
// and an open database. Only server.ts listens; tests build their own app per config.
import { randomUUID } from 'node:crypto';
import compress from '@fastify/compress';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import {
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/connect.js';
import { apiRoutes } from './modules/api.js';
import authentication from './plugins/authentication.js';
import cursors from './plugins/cursors.js';
import database from './plugins/database.js';
import errorHandler, { sendError } from './plugins/error-handler.js';
import { methodNotAllowed } from './plugins/method-not-allowed.js';
import rateLimit from './plugins/rate-limit.js';

export interface AppOptions {
  config: Config;
  database: DatabaseHandle;
  /** Where log lines go; standard output when absent. Tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream;
}

// A request id from a trusted proxy is kept (so one id follows a request through the
// load balancer); anything that is not a short plain token is replaced.
const REQUEST_ID_SHAPE = /^[\w.:-]{1,128}$/;

function loggerOptions(
  config: Config,
  stream?: NodeJS.WritableStream,
): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    ...(stream ? { stream } : {}),
    // Secrets never reach a log line, whatever a serializer is later asked to print.
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]',
    },
  };
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger: loggerOptions(config, options.logStream),
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
  await app.register(authentication);

  const notAllowed = methodNotAllowed(app);
  await app.register(apiRoutes);
  notAllowed.register();
  return app;
}
