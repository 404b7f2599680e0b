import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../http/schemas.js';

const Pong = z.object({ message: z.literal('pong') }).meta({ id: 'Pong' });

export const pingRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/ping',
    {
      schema: {
        operationId: 'ping',
        summary: 'Check connectivity and the API key',
        tags: ['Ping'],
        response: { 200: Pong, 401: errorResponses[401], 429: errorResponses[429] },
      },
    },
    async () => ({ message: 'pong' as const }),
  );
};
