// GET …/meritCycles/{meritCycleId}/employees/bulk: every employee of a cycle in one
// response, NDJSON or CSV (docs/bulk-download.md). Its place in the request pipeline
// (src/http/pipeline.ts): authentication and one request of the quota as for any route;
// never kept by the response cache; its turn at the PostgreSQL pool lasts until the
// response closes (`streams`); it tags and answers 304 itself, from its snapshot, before
// reading a row, since the tag step hashes bodies it has whole; compressed as a stream.
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { Counter, Gauge } from 'prom-client';
import { z } from 'zod';
import {
  findColumnSchema,
  hiddenColumnsFor,
  readableColumnSchemas,
} from '../../columns/repository.js';
import type { Db } from '../../db/connect.js';
import { notFound } from '../../errors.js';
import { flatLineKey } from '../../export/flat-line.js';
import { type FlatLayout, flatLayout } from '../../export/flat-row.js';
import { readScopeOf } from '../../http/authentication.js';
import { etagOf, matchesIfNoneMatch } from '../../http/etag.js';
import { sendTooManyRequests } from '../../http/rate-limit.js';
import { cycleErrorResponses, READ_METHODS } from '../../http/schemas.js';
import { DOWNLOAD_RETRY_AFTER_SECONDS } from '../../rate-limit/download-slots.js';
import type { ReadScope } from '../../tenancy/scope.js';
import { Employee, EmployeesParams } from '../employees/schema.js';
import { MERIT_CYCLES_PATH } from '../merit-cycles/routes.js';
import { CsvWorkers } from './csv-worker.js';
import { EmployeeDownload } from './download.js';
import {
  BULK_FORMATS,
  BULK_SHAPES,
  CONTENT_TYPES,
  csvWriter,
  DEFAULT_SHAPES,
  flatWriter,
  ndjsonWriter,
} from './formats.js';
import { employeesVersion } from './repository.js';
import { openSnapshot, type Snapshot } from './snapshot.js';

// After SIGTERM, downloads in progress get this long to finish (the server exits at 10 s
// whatever is still open); one still running then is cut off, which its client sees as
// a response that did not end, never as a complete one.
const SHUTDOWN_DOWNLOAD_GRACE_MS = 8_000;

// The tag changes with the bytes a download would send: the employees' version, what the
// key may see, the form and shape asked for, the flat row's properties; and this layout,
// should a release change it (2: the flat shapes, CSV's default).
const LAYOUT_VERSION = 2;

/** A line of `format=ndjson&shape=flat`: one flat object, its values typed. */
const FlatEmployee = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
  .describe(
    "`shape=flat`: one employee as a flat object, the OData feed's property names: id, meritCycleId, email, firstName, lastName, preferredName, currencyCode, currencyName, eligibilityStatus, then the cycle's columns (composite parts as `KEY_PART`), with `currency` (the cycle's currency) before the first amount. Amounts and numbers are JSON numbers written from the stored decimal (every digit as stored), dates `YYYY-MM-DD` strings, booleans JSON booleans, an empty value null.",
  )
  .meta({ id: 'FlatMeritCycleEmployee' });

export const BulkQuery = z.strictObject({
  format: z
    .enum(BULK_FORMATS)
    .default('ndjson')
    .describe('`ndjson` (one employee a line) or `csv` (a header row, then one employee a row).'),
  shape: z
    .enum(BULK_SHAPES)
    .optional()
    .describe(
      "`nested`: each employee as the list serves it (NDJSON's default), or as CSV the export's layout, its dotted names (`columns.employee.jobTitle`), which `compplan import` reads back. `flat` (CSV's default): one flat row an employee, named as the OData feed names its properties (`employee_jobTitle`), a column only for the cycle's columns, typed: amounts and numbers as decimals (JSON numbers in NDJSON), dates `YYYY-MM-DD`, booleans `true`/`false`, the cycle's currency once in a `currency` column.",
    ),
  bom: z
    .enum(['true', 'false'])
    .default('true')
    .describe('CSV: `false` leaves out the UTF-8 byte order mark.'),
});

export const bulkRoutes: FastifyPluginAsyncZod = async (app) => {
  const inProgress = new Gauge({
    name: 'compplan_bulk_downloads',
    help: 'Bulk downloads in progress: each holds a database snapshot until its response closes.',
    registers: [app.metrics.registry],
  });
  const rowsRead = new Counter({
    name: 'compplan_bulk_rows_read_total',
    help: 'Employees read from the database by bulk downloads.',
    registers: [app.metrics.registry],
  });
  const downloads = new Set<FastifyReply>();
  // The threads that make CSV, shared by the app's downloads; started when first needed.
  const csvWorkers = new CsvWorkers();
  app.addHook('onClose', () => csvWorkers.close());
  // From the moment the server begins to drain (SIGTERM, or the app closed): the drain
  // waits for every answer, and a stalled download would hold it past the shutdown's grace.
  app.drain.onBegin(() => {
    setTimeout(() => {
      for (const reply of downloads) reply.raw.destroy();
    }, SHUTDOWN_DOWNLOAD_GRACE_MS).unref();
  });

  app.route({
    method: READ_METHODS,
    url: `${MERIT_CYCLES_PATH}/:meritCycleId/employees/bulk`,
    config: { streams: true },
    schema: {
      operationId: 'bulkMeritCycleEmployees',
      summary: 'Download every employee of a merit cycle in one response',
      description:
        "The whole cycle as NDJSON or CSV, from one consistent snapshot: an import committing meanwhile is wholly in it or wholly absent. Streamed (chunked), gzip or br when accepted; no Content-Length. Column keys the key hides are absent; a merit cycle outside the key's cycle scope is not found (404). A key with a row slice (--rows, --reports-to) downloads only the slice's employees, with the cycle's CSV header; its ETag changes only when they change, enter or leave the slice. One request of the quota, and one download per key at a time: a second one meanwhile gets 429 with Retry-After. The ETag changes when the cycle's employees do: If-None-Match answers 304 without reading them.",
      tags: ['Merit cycle employees'],
      params: EmployeesParams,
      querystring: BulkQuery,
      response: {
        200: {
          description:
            'NDJSON: one employee a line (the object the list serves), each line ended by \\n. CSV: a header line, then one employee a row (RFC 4180, CRLF).',
          content: {
            'application/x-ndjson': { schema: z.union([Employee, FlatEmployee]) },
            'text/csv': {
              schema: z
                .string()
                .describe(
                  "`shape=flat` (the default): id, meritCycleId, email, firstName, lastName, preferredName, currencyCode, currencyName, eligibilityStatus, then a column a property of the cycle's columns as the OData feed names them, in its order, with `currency` (the cycle's currency) before the first amount. `shape=nested`: id, email, firstName, lastName, preferredName, currencyCode.code, currencyCode.value, eligibilityStatus, then columns.KEY (columns.KEY.PART for each part of a composite column) in the order of the cycle's column schema (…/columns), then columns.other.",
                ),
            },
          },
        },
        ...cycleErrorResponses,
      },
    },
    handler: async (request, reply) => {
      const scope = readScopeOf(request);
      const { meritCycleId } = request.params;
      const { format, bom } = request.query;
      const shape = request.query.shape ?? DEFAULT_SHAPES[format];
      const isGet = request.method === 'GET';
      const slot = isGet ? await app.rateLimits.downloads.take(keyIdOf(request.apiKey)) : undefined;
      if (isGet && !slot) return sendTooManyRequests(reply, DOWNLOAD_RETRY_AFTER_SECONDS);
      let snapshot: Snapshot | undefined;
      let download: EmployeeDownload | undefined;
      try {
        snapshot = await openSnapshot(app.database);
        const version = await employeesVersion(snapshot.db, scope, meritCycleId);
        if (version === undefined) throw notFound('Merit cycle');
        const flat =
          shape === 'flat' ? await flatLayoutOf(snapshot.db, scope, meritCycleId) : undefined;
        const etag = etagOf(
          JSON.stringify([
            LAYOUT_VERSION,
            meritCycleId,
            version,
            scope.fingerprint,
            format,
            shape,
            bom,
            flat?.properties ?? null,
          ]),
        );
        reply.header('etag', etag).type(CONTENT_TYPES[format]);
        const ifNoneMatch = request.headers['if-none-match'];
        if (typeof ifNoneMatch === 'string' && matchesIfNoneMatch(ifNoneMatch, etag)) {
          reply.removeHeader('content-type');
          return (reply as FastifyReply).code(304).send();
        }
        if (!isGet) return (reply as FastifyReply).send();
        const hidden = await hiddenColumnsFor(snapshot.db, scope, meritCycleId);
        request.columnsServed = await app.audit.columnsOf(scope, meritCycleId);
        const writer = flat
          ? flatWriter(flat, format, bom === 'true', csvWorkers)
          : format === 'csv'
            ? csvWriter(
                (await findColumnSchema(snapshot.db, scope, meritCycleId)) ?? [],
                hidden,
                bom === 'true',
                csvWorkers,
              )
            : ndjsonWriter(hidden);
        download = new EmployeeDownload({
          snapshot,
          dialect: app.dialect,
          scope,
          meritCycleId,
          writer,
          // The flat CSV sends each employee's line as the import stored it when it was
          // written for this layout (export/flat-line.ts).
          flatKey: flat && format === 'csv' ? flatLineKey(flat) : undefined,
          onRows: (count) => rowsRead.inc(count),
          // The audit log's count: what was handed to the response, recorded when it
          // closes (src/http/pipeline.ts), also when the client left part-way.
          onSent: (count) => {
            request.employeesServed += count;
          },
        });
      } finally {
        // Whatever does not become a download gives its snapshot and slot back now.
        if (!download) {
          await snapshot?.close();
          slot?.release();
        }
      }
      const started = download;
      inProgress.inc();
      downloads.add(reply);
      // The response closes when the last byte is sent, or when the client leaves: the
      // database read ends there (whatever stream the compression step put in between).
      reply.raw.once('close', () => {
        started.destroy();
        slot?.release();
        downloads.delete(reply);
        inProgress.dec();
      });
      // A read or conversion that fails ends the response, which its client sees as cut
      // off; the log says why.
      started.once('error', (error) => request.log.error({ err: error }, 'bulk download failed'));
      return reply.send(started as never);
    },
  });
};

/**
 * The flat row of the cycle for the key: its columns and their names as the feed's model
 * has them (the same readable cycles' schemas, the same hidden columns).
 */
async function flatLayoutOf(db: Db, scope: ReadScope, meritCycleId: string): Promise<FlatLayout> {
  const feedCycles = await readableColumnSchemas(db, scope);
  const cycle = feedCycles.find((readable) => readable.meritCycleId === meritCycleId);
  if (!cycle) throw notFound('Merit cycle');
  return flatLayout(cycle, feedCycles);
}

/** The id of the key a request was authenticated with (every API route has one). */
function keyIdOf(key: { id: string } | null): string {
  if (!key) throw new Error('a bulk download outside the authenticated API scope');
  return key.id;
}
