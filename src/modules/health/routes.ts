// Health endpoints for load balancers and orchestrators; no key, no rate limit.
// /healthz: the process answers (liveness; depends on nothing).
// /readyz: the database answers, within its bound, so requests can be served (readiness). The rate-limit
// store is reported, not required: without Redis the API serves with per-instance limits.

import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import { z } from 'zod';
import { READ_METHODS } from '../../http/schemas.js';

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

/**
 * 'up' when `select 1` answers; 'down' when it fails or has not answered within the
 * readiness bound (src/db/timeouts.ts): a probe gets its answer instead of a hang. The
 * statement left waiting ends by its own bound.
 */
async function databaseAnswers(
  app: FastifyInstance,
  log: FastifyBaseLogger,
): Promise<'up' | 'down'> {
  const check = sql`select 1`.execute(app.db).then(
    () => 'up' as const,
    (error: unknown) => {
      log.warn({ err: error }, 'readiness: database check failed');
      return 'down' as const;
    },
  );
  const withinMs = app.database.bounds?.readinessMs;
  if (withinMs === undefined) return check;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'down'>((resolve) => {
    timer = setTimeout(() => {
      log.warn({ withinMs }, 'readiness: the database did not answer in time');
      resolve('down');
    }, withinMs);
  });
  try {
    return await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.route({
    method: READ_METHODS,
    url: '/healthz',
    schema: {
      operationId: 'healthz',
      summary: 'Liveness: the process is up',
      description: 'Depends on nothing: answers while the process runs. No key needed.',
      tags: ['Operations'],
      response: { 200: Health },
    },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.route({
    method: READ_METHODS,
    url: '/readyz',
    schema: {
      operationId: 'readyz',
      summary: 'Readiness: the database answers',
      description:
        'Ready when the database answers; also reports where rate-limit counters live. No key needed.',
      tags: ['Operations'],
      response: { 200: Readiness, 503: Readiness },
    },
    handler: async (request, reply) => {
      const database = await databaseAnswers(app, request.log);
      const rateLimitStore = app.rateLimits.storeState();
      if (database === 'down') {
        return reply.code(503).send({ status: 'unavailable', database, rateLimitStore });
      }
      return { status: 'ready' as const, database, rateLimitStore };
    },
  });
};
