// The two delta endpoints (docs/delta-sync.md): what changed in the merit cycles, and
// in the employees of one merit cycle, since a deltaToken — or everything, without one.
// Same key, quota, errors and headers as every endpoint (the request pipeline); answers
// are not kept by the response cache, since every last page carries a fresh token.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { notFound } from '../../errors.js';
import { readScopeOf } from '../../http/authentication.js';
import { errorResponses, READ_METHODS } from '../../http/schemas.js';
import type { CursorScope } from '../../pagination/cursor.js';
import { pageOfJsonBytes } from '../../pagination/page.js';
import { EmployeesParams } from '../employees/schema.js';
import { MERIT_CYCLES_PATH } from '../merit-cycles/routes.js';
import { readEmployeeChanges, readMeritCycleChanges } from './repository.js';
import { DeltaQuery, EmployeeDeltaPage, MeritCycleDeltaPage } from './schema.js';
import { type Change, checkAnswerable, deltaPage, resolveDeltaWalk } from './walk.js';

export interface DeltaRoutesOptions {
  /** The server's clock, milliseconds since the epoch (tests move it). */
  now: () => number;
  /** CHANGE_RETENTION_DAYS: how old a deltaToken may be. */
  changeRetentionDays: number;
}

const responses = {
  400: errorResponses[400],
  401: errorResponses[401],
  403: errorResponses[403],
  410: errorResponses[410],
  422: errorResponses[422],
  429: errorResponses[429],
};

const DELTA_DESCRIPTION =
  'Without deltaToken: every current item, paged (a full sync). With the deltaToken of the last page of a previous walk: only the items created, changed or removed since, in the order of their last change, ties by id — changed items in full, removed ones as `{ "id", "removed": true }`. Every page but the last has a nextCursor; the last has the deltaToken to keep for next time. A token older than CHANGE_RETENTION_DAYS (30 by default) gets 410: sync in full again.';

const REMOVED_JSON = (id: string) => Buffer.from(`{"id":${JSON.stringify(id)},"removed":true}`);

export const deltaRoutes: FastifyPluginAsyncZod<DeltaRoutesOptions> = async (app, options) => {
  const walkOf = (scope: CursorScope, query: DeltaQuery) =>
    resolveDeltaWalk({
      codec: app.cursors,
      scope,
      nextCursor: query.nextCursor,
      deltaToken: query.deltaToken,
      limit: query.limit,
      now: options.now(),
      retentionDays: options.changeRetentionDays,
    });

  app.route({
    method: READ_METHODS,
    url: `${MERIT_CYCLES_PATH}/delta`,
    schema: {
      operationId: 'meritCyclesDelta',
      summary: 'What changed in the merit cycles',
      description: `${DELTA_DESCRIPTION} A change of a merit cycle's exchange rates is a change of the cycle. A key restricted to some merit cycles sees only theirs; a key with a row slice sees every cycle (a slice limits employees, not cycles).`,
      tags: ['Delta sync'],
      querystring: DeltaQuery,
      response: { 200: MeritCycleDeltaPage, ...responses },
    },
    handler: async (request) => {
      const reader = readScopeOf(request);
      const scope = { endpoint: 'meritCyclesDelta', reader: reader.fingerprint } as const;
      const walk = walkOf(scope, request.query);
      const read = await readMeritCycleChanges(app.db, reader, walk);
      checkAnswerable(walk, read.state);
      const page = deltaPage({ codec: app.cursors, scope, walk, ...read, now: options.now() });
      return {
        data: page.changes.map(({ id, item }) => item ?? { id, removed: true as const }),
        nextCursor: page.nextCursor,
        deltaToken: page.deltaToken,
      };
    },
  });

  app.route({
    method: READ_METHODS,
    url: `${MERIT_CYCLES_PATH}/:meritCycleId/employees/delta`,
    schema: {
      operationId: 'meritCycleEmployeesDelta',
      summary: 'What changed in the employees of a merit cycle',
      description: `${DELTA_DESCRIPTION} A merit cycle removed since the token is not found (404): its removal is in the merit cycles delta, and stands for all of its employees. Column keys the key hides are absent, as in the list. A key with a row slice (--rows, --reports-to) sees only the slice's changes: an employee who enters the slice comes in full, as a created one; one who leaves it comes as removed; a change of an employee outside it is none.`,
      tags: ['Delta sync'],
      params: EmployeesParams,
      querystring: DeltaQuery,
      response: {
        200: EmployeeDeltaPage,
        ...responses,
        404: errorResponses[404],
      },
    },
    handler: async (request, reply) => {
      const reader = readScopeOf(request);
      const { meritCycleId } = request.params;
      const scope = {
        endpoint: 'employeesDelta',
        reader: reader.fingerprint,
        meritCycleId,
      } as const;
      const walk = walkOf(scope, request.query);
      const read = await readEmployeeChanges(app.db, app.dialect, reader, meritCycleId, walk);
      if (!read) throw notFound('Merit cycle');
      checkAnswerable(walk, read.state);
      const page = deltaPage({ codec: app.cursors, scope, walk, ...read, now: options.now() });
      request.employeesServed = page.changes.filter((change) => change.item !== undefined).length;
      if (request.employeesServed > 0) {
        request.columnsServed = await app.audit.columnsOf(reader, meritCycleId);
      }
      // Each employee's stored JSON as it is, as the list sends it: bytes joined, no
      // serialization.
      const json = pageOfJsonBytes(
        page.changes.map(({ id, item }: Change<Buffer>) => item ?? REMOVED_JSON(id)),
        { nextCursor: page.nextCursor, deltaToken: page.deltaToken },
      );
      return reply.type('application/json; charset=utf-8').send(json as never);
    },
  });
};
