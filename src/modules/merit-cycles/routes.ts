import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { findColumnSchema } from '../../columns/repository.js';
import { notFound } from '../../errors.js';
import { readScopeOf } from '../../http/authentication.js';
import {
  cycleErrorResponses,
  errorResponses,
  keyedErrorResponses,
  NoQuery,
  READ_METHODS,
} from '../../http/schemas.js';
import { resolvePageRequest, toPage } from '../../pagination/page.js';
import { findMeritCycleRow } from '../../tenancy/cycles.js';
import type { ReadScope } from '../../tenancy/scope.js';
import { afterMeritCycle, listMeritCycles, toExchangeRates, toMeritCycle } from './repository.js';
import {
  ExchangeRates,
  filtersOf,
  ListMeritCyclesQuery,
  MeritCycle,
  MeritCycleAfter,
  MeritCycleColumns,
  MeritCycleFilters,
  MeritCyclePage,
  MeritCycleParams,
} from './schema.js';

export const MERIT_CYCLES_PATH = '/v1/compensationPlanning/meritCycles';

export const meritCycleRoutes: FastifyPluginAsyncZod = async (app) => {
  app.route({
    method: READ_METHODS,
    config: { cacheAnswers: true },
    url: MERIT_CYCLES_PATH,
    schema: {
      operationId: 'listMeritCycles',
      summary: 'List merit cycles',
      description:
        'Newest createdDate first, ties by id. Filters: status, and startDate bounds (gt, gte, lt, lte as flat parameters or as startDate[gte] …), which compare the UTC calendar date of startDate and combine with AND. A key restricted to some merit cycles lists only those; a row slice (--rows, --reports-to) limits employees, not merit cycles.',
      tags: ['Merit cycles'],
      querystring: ListMeritCyclesQuery,
      response: {
        200: MeritCyclePage,
        400: errorResponses[400],
        ...keyedErrorResponses,
      },
    },
    handler: async (request) => {
      const reader = readScopeOf(request);
      const list = { endpoint: 'meritCycles', reader: reader.fingerprint } as const;
      const page = resolvePageRequest({
        codec: app.cursors,
        scope: list,
        cursor: request.query.nextCursor,
        limit: request.query.limit,
        requestFilters: filtersOf(request.query),
        emptyFilters: {},
        filtersSchema: MeritCycleFilters,
        afterSchema: MeritCycleAfter,
      });
      const { rows, last } = toPage(await listMeritCycles(app.db, reader, page), page.limit);
      return {
        data: rows,
        nextCursor: last ? app.cursors.encode(list, page.filters, afterMeritCycle(last)) : null,
      };
    },
  });

  app.route({
    method: READ_METHODS,
    config: { cacheAnswers: true },
    url: `${MERIT_CYCLES_PATH}/:id`,
    schema: {
      operationId: 'getMeritCycle',
      summary: 'Get a merit cycle',
      description:
        "One merit cycle of the key's organisation, by id. A cycle outside the key's cycle scope is not found (404), like one that does not exist.",
      tags: ['Merit cycles'],
      params: MeritCycleParams,
      querystring: NoQuery,
      response: {
        200: MeritCycle,
        ...cycleErrorResponses,
      },
    },
    handler: async (request) => {
      const row = await findOwnMeritCycle(request.params.id, readScopeOf(request));
      return toMeritCycle(row);
    },
  });

  app.route({
    method: READ_METHODS,
    config: { cacheAnswers: true },
    url: `${MERIT_CYCLES_PATH}/:id/exchangeRates`,
    schema: {
      operationId: 'getMeritCycleExchangeRates',
      summary: 'Get the exchange rates of a merit cycle',
      description: 'Rates from the merit cycle currency (base) to each loaded currency.',
      tags: ['Merit cycles'],
      params: MeritCycleParams,
      querystring: NoQuery,
      response: {
        200: ExchangeRates,
        ...cycleErrorResponses,
      },
    },
    handler: async (request) => {
      const row = await findOwnMeritCycle(request.params.id, readScopeOf(request));
      return toExchangeRates(row);
    },
  });

  app.route({
    method: READ_METHODS,
    config: { cacheAnswers: true },
    url: `${MERIT_CYCLES_PATH}/:id/columns`,
    schema: {
      operationId: 'getMeritCycleColumns',
      summary: 'Get the column schema of a merit cycle',
      description:
        "Every column key the merit cycle's employees carry, with its one display name and type, ordered by key; for a composite column the parts seen. Kept up to date by each import. Column keys the key hides are absent; a merit cycle outside the key's cycle scope is not found (404). A key's row slice does not change it: the schema is the cycle's.",
      tags: ['Merit cycles'],
      params: MeritCycleParams,
      querystring: NoQuery,
      response: {
        200: MeritCycleColumns,
        ...cycleErrorResponses,
      },
    },
    handler: async (request) => {
      const columns = await findColumnSchema(app.db, readScopeOf(request), request.params.id);
      if (!columns) throw notFound('Merit cycle');
      return { data: columns, nextCursor: null };
    },
  });

  async function findOwnMeritCycle(id: string, scope: ReadScope) {
    const row = await findMeritCycleRow(app.db, scope, id);
    if (!row) throw notFound('Merit cycle');
    return row;
  }
};
