import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses, NoQuery, READ_METHODS } from '../../http/schemas.js';

const Pong = z.object({ message: z.literal('pong') }).meta({ id: 'Pong' });

export const pingRoutes: FastifyPluginAsyncZod = async (app) => {
  app.route({
    method: READ_METHODS,
    url: '/ping',
    config: { readsDatabase: false },
    schema: {
      operationId: 'ping',
      summary: 'Check connectivity and the API key',
      description: 'Answers `{"message": "pong"}` when the x-api-key header holds a valid key.',
      tags: ['Ping'],
      querystring: NoQuery,
      response: {
        200: Pong,
        401: errorResponses[401],
        403: errorResponses[403],
        422: errorResponses[422],
        429: errorResponses[429],
      },
    },
    handler: async () => ({ message: 'pong' as const }),
  });
};
