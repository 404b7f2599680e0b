import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { notFound } from '../../errors.js';
import { readScopeOf } from '../../http/authentication.js';
import { cycleErrorResponses, errorResponses, READ_METHODS } from '../../http/schemas.js';
import { type PageRequest, pageOfJsonBytes, resolvePageRequest } from '../../pagination/page.js';
import { findMeritCycleRow } from '../../tenancy/cycles.js';
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
    config: { cacheAnswers: true },
    url: `${MERIT_CYCLES_PATH}/:meritCycleId/employees`,
    schema: {
      operationId: 'listMeritCycleEmployees',
      summary: 'List the employees of a merit cycle',
      description:
        "Ordered by lastName, then firstName, then id (code-point order). Column keys the key hides are absent from every employee; a merit cycle outside the key's cycle scope is not found (404). A key with a row slice (--rows, --reports-to) lists only the slice's employees, and its cursors walk only them.",
      tags: ['Merit cycle employees'],
      params: EmployeesParams,
      querystring: ListEmployeesQuery,
      response: {
        200: EmployeePage,
        400: errorResponses[400],
        ...cycleErrorResponses,
      },
    },
    handler: async (request, reply) => {
      const reader = readScopeOf(request);
      const { meritCycleId } = request.params;
      const list = { endpoint: 'employees', reader: reader.fingerprint, meritCycleId } as const;
      let page: PageRequest<EmployeeFilters, EmployeeAfter>;
      try {
        page = resolvePageRequest({
          codec: app.cursors,
          scope: list,
          cursor: request.query.nextCursor,
          limit: request.query.limit,
          requestFilters: undefined,
          emptyFilters: {},
          filtersSchema: EmployeeFilters,
          afterSchema: EmployeeAfter,
        });
      } catch (error) {
        // A cycle the key may not read is a 404 whatever the cursor says: the page query
        // below answers that too, but only once the cursor has been read.
        if (!(await findMeritCycleRow(app.db, reader, meritCycleId))) {
          throw notFound('Merit cycle');
        }
        throw error;
      }
      const found = await readEmployeePage(app.db, app.dialect, reader, meritCycleId, page);
      if (!found) throw notFound('Merit cycle');
      const nextCursor = found.after ? app.cursors.encode(list, page.filters, found.after) : null;
      request.employeesServed = found.count;
      if (found.count > 0) request.columnsServed = await app.audit.columnsOf(reader, meritCycleId);
      // The rows hold each employee's JSON text already: the page is their concatenation,
      // sent as bytes with a JSON content type, without serialization.
      const json = pageOfJsonBytes([found.bodies], { nextCursor });
      return reply.type('application/json; charset=utf-8').send(json as never);
    },
  });
};
