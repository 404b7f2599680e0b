import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { notFound } from '../../errors.js';
import { errorResponses, READ_METHODS } from '../../http/schemas.js';
import { resolvePageRequest } from '../../pagination/page.js';
import { organizationOf } from '../../plugins/authentication.js';
import { findMeritCycleRow } from '../merit-cycles/repository.js';
import { MERIT_CYCLES_PATH } from '../merit-cycles/routes.js';
import { readEmployeePage } from './repository.js';
import {
  EmployeeAfter,
  EmployeeFilters,
  EmployeePage,
  EmployeesParams,
  ListEmployeesQuery,
} from './schema.js';

export const employeeRoutes: FastifyPluginAsyncZod = async (app) => {
  app.route({
    method: READ_METHODS,
    url: `${MERIT_CYCLES_PATH}/:meritCycleId/employees`,
    schema: {
      operationId: 'listMeritCycleEmployees',
      summary: 'List the employees of a merit cycle',
      description: 'Ordered by lastName, then firstName, then id (code-point order).',
      tags: ['Merit cycle employees'],
      params: EmployeesParams,
      querystring: ListEmployeesQuery,
      response: {
        200: EmployeePage,
        400: errorResponses[400],
        401: errorResponses[401],
        404: errorResponses[404],
        422: errorResponses[422],
        429: errorResponses[429],
      },
    },
    handler: async (request, reply) => {
      const organizationId = organizationOf(request);
      const { meritCycleId } = request.params;
      if (!(await findMeritCycleRow(app.db, organizationId, meritCycleId))) {
        throw notFound('Merit cycle');
      }
      const scope = { endpoint: 'employees', organizationId, meritCycleId } as const;
      const page = resolvePageRequest({
        codec: app.cursors,
        scope,
        cursor: request.query.nextCursor,
        limit: request.query.limit,
        requestFilters: undefined,
        emptyFilters: {},
        filtersSchema: EmployeeFilters,
        afterSchema: EmployeeAfter,
      });
      const { bodies, after } = await readEmployeePage(
        app.db,
        app.dialect,
        organizationId,
        meritCycleId,
        page,
      );
      const nextCursor = after ? app.cursors.encode(scope, page.filters, after) : null;
      // The rows hold each employee's JSON text already: the page is their concatenation.
      // A string with a JSON content type is sent as it is, without serialization.
      const json = `{"data":[${bodies}],"nextCursor":${JSON.stringify(nextCursor)}}`;
      return reply.type('application/json; charset=utf-8').send(json as never);
    },
  });
};
