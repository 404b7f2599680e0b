// Health endpoints for load balancers and orchestrators; no key, no rate limit.
// /healthz: the process answers (liveness; depends on nothing).
// /readyz: the database answers, so requests can be served (readiness). The rate-limit
// store is reported, not required: without Redis the API serves with per-instance limits.

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import { z } from 'zod';

const Health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
const Readiness = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    database: z.enum(['up', 'down']),
    rateLimitStore: z
      .enum(['local', 'redis', 'local-fallback'])
      .describe(
        'Where rate-limit counters live now; local-fallback: Redis is configured but unreachable.',
      ),
  })
  .meta({ id: 'Readiness' });

export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'healthz',
        summary: 'Liveness: the process is up',
        tags: ['Operations'],
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readyz',
        summary: 'Readiness: the database answers',
        tags: ['Operations'],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (request, reply) => {
      const database = await sql`select 1`.execute(app.db).then(
        () => 'up' as const,
        (error: unknown) => {
          request.log.warn({ err: error }, 'readiness: database check failed');
          return 'down' as const;
        },
      );
      const rateLimitStore = app.rateLimits.storeState();
      if (database === 'down') {
        return reply.code(503).send({ status: 'unavailable', database, rateLimitStore });
      }
      return { status: 'ready' as const, database, rateLimitStore };
    },
  );
};
