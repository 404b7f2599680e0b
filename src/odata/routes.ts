// The OData v4 feed for BI tools at /odata/v4/ (docs/odata.md): the service document,
// $metadata, the entity sets MeritCycles, Employees and ExchangeRates, a cycle's employees
// and exchange rates, counts, and the query options the feed serves. Every route is an API
// route: the pipeline (src/http/pipeline.ts) authenticates the key, takes its quota (a
// feed request waits for the next second's rather than being refused), and writes every
// error as an OData error body (http/error-handler.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import Negotiator from 'negotiator';
import { columnNeedle, columnsServedText } from '../audit/columns-served.js';
import { readableColumnSchemas } from '../columns/repository.js';
import type { Dialect } from '../db/connect.js';
import { ApiError, notFound } from '../errors.js';
import { readScopeOf } from '../http/authentication.js';
import { READ_METHODS } from '../http/schemas.js';
import { isId } from '../ids.js';
import { findMeritCycleRow } from '../tenancy/cycles.js';
import type { ReadScope } from '../tenancy/scope.js';
import { metadataJson, metadataXml } from './csdl.js';
import { entityJson, type Selected, selectedProperties, sortValues } from './entities.js';
import { filterCondition } from './filter.js';
import {
  buildModel,
  ENTITY_SETS,
  type EntitySetName,
  type EntityType,
  type FeedModel,
  propertyNamed,
} from './model.js';
import { DEFAULT_PAGE_SIZE, decodeSkipToken, encodeSkipToken, listOf, nextLink } from './paging.js';
import {
  ieee754CompatibleOf,
  parseQueryOptions,
  type QueryOptions,
  readOptions,
} from './query-options.js';
import { countRows, type Row, readPage } from './repository.js';
import { type Resource, resourceOf } from './resource.js';
import { type SortKey, type Source, sourceOf } from './sources.js';

export const FEED_ROOT = '/odata/v4';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route of the OData feed: over the key's quota it waits instead of a 429. */
    feed?: boolean;
  }
}

/** The JSON answers' media type; IEEE754Compatible=true: decimals (and counts) as strings. */
const jsonType = (ieee754Compatible: boolean) =>
  `application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=${ieee754Compatible};charset=utf-8`;

/**
 * Whether the client asks for IEEE754Compatible=true (OData JSON Format 4.01, section
 * 3.2): in `$format`'s media type, else in an `Accept` media range that takes JSON. A value
 * other than true or false is a 400 wherever it is.
 */
function ieee754Compatible(request: FastifyRequest, options: QueryOptions): boolean {
  const header = request.headers.accept;
  let fromAccept: boolean | null = null;
  for (const range of (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')) {
    const type = range.split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json' && type !== 'application/*' && type !== '*/*') continue;
    fromAccept = ieee754CompatibleOf(range) ?? fromAccept;
  }
  return options.ieee754Compatible ?? fromAccept ?? false;
}

/** `OData-MaxVersion` below 4.0: the client cannot read what the feed writes (400). */
function checkMaxVersion(request: FastifyRequest): void {
  const header = request.headers['odata-maxversion'];
  if (typeof header !== 'string') return;
  const match = /^\s*(\d+)\.(\d+)\s*$/.exec(header);
  if (!match || Number(match[1]) < 4) {
    throw new ApiError(400, `OData-MaxVersion ${header}: this feed speaks OData 4.0`);
  }
}

/**
 * $metadata's format without $format: CSDL XML, the one every OData 4.0 client reads,
 * unless the Accept header takes JSON and not XML (`Accept: application/json`).
 */
function metadataFormat(request: FastifyRequest): 'json' | 'xml' {
  const negotiator = new Negotiator(request.raw);
  const json = negotiator.mediaType(['application/json']) !== undefined;
  const xml = negotiator.mediaType(['application/xml']) !== undefined;
  return json && !xml ? 'json' : 'xml';
}

/** The page size a `Prefer: odata.maxpagesize=N` asks for, when it asks for one we honour. */
function preferredPageSize(request: FastifyRequest): number | undefined {
  const header = request.headers.prefer;
  const text = Array.isArray(header) ? header.join(',') : header;
  for (const preference of (text ?? '').split(',')) {
    const [name = '', value = ''] = preference.split('=').map((part) => part.trim());
    if (name.toLowerCase() !== 'odata.maxpagesize') continue;
    const size = Number(value.replace(/^"|"$/g, ''));
    if (Number.isSafeInteger(size) && size > 0 && size <= DEFAULT_PAGE_SIZE) return size;
  }
  return undefined;
}

/**
 * The order a request's $orderby asks for. The set's own order, its reverse or the order by
 * id are read as before, along an index; any other (every primitive property, asc or desc,
 * several keys) orders by the properties' SQL, then by the set's own order (which makes a
 * row unique), so that a walk by $skiptoken is exact: the token carries every key's value.
 */
function orderOf(options: QueryOptions, source: Source, type: EntityType, dialect: Dialect) {
  const asked = options.orderby;
  if (asked === null || asked.length === 0) return source.nativeOrder;
  const byId = asked.length === 1 && asked[0]?.name === 'id' && source.idOrder;
  const candidate = byId ? (source.idOrder ?? []) : source.nativeOrder;
  const prefix = asked.every((item, index) => candidate[index]?.name === item.name);
  if (prefix) {
    const flips = asked.map((item, index) => item.descending !== candidate[index]?.descending);
    if (flips.every(Boolean))
      return candidate.map((key) => ({ ...key, descending: !key.descending }));
    if (!flips.some(Boolean)) return candidate;
  }
  const unique = source.nativeOrder.filter((key) => !asked.some((item) => item.name === key.name));
  return [...asked, ...unique].map((item, index): SortKey => {
    const property = propertyNamed(type, item.name, '$orderby');
    let expression = source.expression(property);
    // Strings order by code point: the native columns are COLLATE "C" already.
    if (dialect === 'postgres' && property.kind === 'column' && property.type === 'Edm.String') {
      expression = sql`(${expression} collate "C")`;
    }
    return {
      name: item.name,
      column: '',
      field: `sort_${index}`,
      descending: item.descending,
      expression,
      nullable: property.nullable,
    };
  });
}

/**
 * What the audit log records of an answer with `employees` Employee entities: their count,
 * and the column keys of the properties selected (each is written, null when the employee
 * has no value), a constant of the request's type and $select; through a cycle, only those
 * of the cycle's columns (`cycleColumns`, as columns-served.ts stores them), which are all
 * its entities can hold. A $count answer serves none.
 */
function served(
  request: FastifyRequest,
  selected: readonly Selected[],
  employees: number,
  cycleColumns?: string | null,
): void {
  request.employeesServed = employees;
  if (employees === 0) return;
  const keys: string[] = [];
  for (const { property } of selected) {
    if (property.kind !== 'column') continue;
    if (cycleColumns === undefined || cycleColumns?.includes(columnNeedle(property.key))) {
      keys.push(property.key);
    }
  }
  request.columnsServed = columnsServedText(keys);
}

/** The merit cycle a path names: the navigation's, or a MeritCycles entity's key. */
function cycleOf(
  resource: Exclude<Resource, { kind: 'service' | 'metadata' }>,
): string | undefined {
  if (resource.kind === 'collection') return resource.meritCycleId;
  return resource.set === 'MeritCycles' ? resource.id : undefined;
}

export async function odataRoutes(app: FastifyInstance): Promise<void> {
  async function modelFor(scope: ReadScope, set: EntitySetName | 'all'): Promise<FeedModel> {
    // Only the Employee type depends on the data: the others are built without a query.
    if (set !== 'all' && set !== 'Employees') return buildModel([]);
    return buildModel(await readableColumnSchemas(app.db, scope));
  }

  async function serve(request: FastifyRequest, reply: FastifyReply) {
    checkMaxVersion(request);
    const url = request.raw.url ?? request.url;
    const queryAt = url.indexOf('?');
    const path = (queryAt === -1 ? url : url.slice(0, queryAt)).slice(FEED_ROOT.length);
    const resource = resourceOf(path.replace(/^\//, ''));
    const given = readOptions(queryAt === -1 ? '' : url.slice(queryAt + 1));
    const scope = readScopeOf(request);
    const root = `${request.protocol}://${request.host}${FEED_ROOT}/`;

    if (resource.kind === 'service') {
      const options = parseQueryOptions(given, null);
      if (options.format === 'xml') {
        throw new ApiError(406, '$format=xml is served for $metadata only');
      }
      const value = ENTITY_SETS.map((name) => ({ name, kind: 'EntitySet', url: name }));
      return reply
        .type(jsonType(ieee754Compatible(request, options)))
        .send(JSON.stringify({ '@odata.context': `${root}$metadata`, value }));
    }
    if (resource.kind === 'metadata') {
      const options = parseQueryOptions(given, null);
      const ieee754 = ieee754Compatible(request, options);
      const model = await modelFor(scope, 'all');
      const format = options.format ?? metadataFormat(request);
      if (format === 'json') {
        return reply.type(jsonType(ieee754)).send(JSON.stringify(metadataJson(model)));
      }
      return reply.type('application/xml; charset=utf-8').send(metadataXml(model));
    }
    return serveData(request, reply, resource, given, scope, root);
  }

  async function serveData(
    request: FastifyRequest,
    reply: FastifyReply,
    resource: Exclude<Resource, { kind: 'service' | 'metadata' }>,
    given: ReadonlyMap<string, string>,
    scope: ReadScope,
    root: string,
  ) {
    const set = resource.set;
    const model = await modelFor(scope, set);
    const type = model[set];
    const options = parseQueryOptions(given, type);
    if (options.format === 'xml')
      throw new ApiError(406, '$format=xml is served for $metadata only');
    const ieee754 = ieee754Compatible(request, options);
    const json = jsonType(ieee754);
    const meritCycleId = cycleOf(resource);
    // The audit log's merit cycle: the one the path names (not one a $filter names).
    request.meritCycleServed = meritCycleId;
    // A cycle out of the key's scope is not found, exactly as on REST.
    if (meritCycleId !== undefined && !(await findMeritCycleRow(app.db, scope, meritCycleId))) {
      throw notFound('Merit cycle');
    }
    const source = sourceOf(set, app.dialect, scope, meritCycleId);
    const filter = options.filter
      ? filterCondition(options.filter, { type, source, dialect: app.dialect })
      : null;
    const selected = selectedProperties(type, options.select);
    const selection = options.select === null ? '' : `(${options.select.join(',')})`;

    if (resource.kind === 'entity') {
      // One entity: only $select (and $format) apply to it.
      for (const name of given.keys()) {
        if (name !== '$select' && name !== '$format') {
          throw new ApiError(400, `${name} does not apply to a single entity`);
        }
      }
      if (set === 'Employees' && !isId('mce', resource.id)) throw notFound('Employee');
      const rows = await readPage(app.db, source, {
        filter: set === 'Employees' ? sql`e.id = ${resource.id}` : null,
        order: source.nativeOrder,
        after: null,
        offset: 0,
        limit: 1,
      });
      const row = rows[0];
      if (!row) throw notFound(set === 'Employees' ? 'Employee' : 'Merit cycle');
      if (set === 'Employees') served(request, selected, 1);
      const body = entityJson(type, row, selected, ieee754);
      const context = JSON.stringify(`${root}$metadata#${set}${selection}/$entity`);
      const rest = body === '{}' ? '}' : `,${body.slice(1)}`;
      return reply.type(json).send(`{"@odata.context":${context}${rest}`);
    }

    if (resource.count) {
      const count = await countRows(app.db, source, filter);
      return reply.type('text/plain; charset=utf-8').send(String(count));
    }

    const order = orderOf(options, source, type, app.dialect);
    const list = listOf(set, scope.fingerprint, resource.meritCycleId);
    const state = options.skiptoken
      ? decodeSkipToken(app.cursors, list, options.skiptoken, given)
      : { after: null, remaining: options.top };
    const preferred = preferredPageSize(request);
    if (preferred !== undefined)
      reply.header('preference-applied', `odata.maxpagesize=${preferred}`);
    const pageSize = Math.min(
      preferred ?? DEFAULT_PAGE_SIZE,
      state.remaining ?? Number.MAX_SAFE_INTEGER,
    );
    const rows = await readPage(app.db, source, {
      filter,
      order,
      after: state.after,
      offset: options.skiptoken ? 0 : (options.skip ?? 0),
      limit: pageSize + 1,
    });
    const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
    const remaining = state.remaining === null ? null : state.remaining - page.length;
    // Another page when the database has more rows and $top is not yet reached.
    const more = rows.length > pageSize && remaining !== 0;
    const count = options.count ? await countRows(app.db, source, filter) : undefined;

    let link: string | undefined;
    if (more) {
      const last = page[page.length - 1] as Row;
      const token = encodeSkipToken(app.cursors, list, given, {
        after: sortValues(
          last,
          order.map((key) => key.field),
        ),
        remaining,
      });
      const resourcePath = request.raw.url?.split('?')[0] ?? '';
      link = nextLink(`${request.protocol}://${request.host}${resourcePath}`, given, token);
    }
    const context = `${root}$metadata#${set}${selection}`;
    let head = `{"@odata.context":${JSON.stringify(context)}`;
    // @odata.count is an Edm.Int64: a string under IEEE754Compatible=true.
    if (count !== undefined) head += `,"@odata.count":${ieee754 ? `"${count}"` : count}`;
    const values = page.map((row) => entityJson(type, row, selected, ieee754)).join(',');
    const tail = link === undefined ? '' : `,"@odata.nextLink":${JSON.stringify(link)}`;
    if (set === 'Employees' && page.length > 0) {
      const cycle = resource.meritCycleId;
      served(request, selected, page.length, cycle && (await app.audit.columnsOf(scope, cycle)));
    }
    return reply.type(json).send(`${head},"value":[${values}]${tail}}`);
  }

  // The audit log's merit cycle of a request refused before serve() ran (src/http/audit.ts).
  const cycleNamedBy = (path: string) => {
    try {
      const resource = resourceOf(path.slice(FEED_ROOT.length).replace(/^\//, ''));
      return resource.kind === 'service' || resource.kind === 'metadata'
        ? undefined
        : cycleOf(resource);
    } catch {
      return undefined;
    }
  };
  const config = { api: true, feed: true, cycleNamedBy };
  app.route({ method: READ_METHODS, url: FEED_ROOT, config, handler: serve });
  app.route({ method: READ_METHODS, url: `${FEED_ROOT}/*`, config, handler: serve });
}
