// The audit log in the server (docs/security.md, "Audit log"): the pipeline's audit step
// hands each answered request with a valid key to `app.audit.recordRequest`, which keeps
// its entry for this instance's writer (writer.ts), which `compplan serve` on SQLite has
// write in a thread of its own (writer-thread.ts); the writer is flushed before the
// database closes (SIGTERM), and `compplan serve` purges entries past AUDIT_RETENTION_DAYS.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge } from 'prom-client';
import { CycleColumnsServed } from '../audit/columns-served.js';
import { purgeAuditEntries } from '../audit/repository.js';
import { AuditWriter } from '../audit/writer.js';
import { AuditWriterThread, writeDirectly } from '../audit/writer-thread.js';
import { type DatabaseConfig, DEFAULT_AUDIT_RETENTION_DAYS } from '../config.js';
import type { ReadScope } from '../tenancy/scope.js';
import { routeConfigOf } from './route-config.js';

declare module 'fastify' {
  interface FastifyInstance {
    audit: AuditLog;
  }
  interface FastifyContextConfig {
    /**
     * The merit cycle a request's path names, for routes without a :meritCycleId parameter
     * (the OData feed): read for the entry of a request refused before its handler ran
     * (403 for its address, 429), which set no meritCycleServed.
     */
    cycleNamedBy?: (path: string) => string | undefined;
  }
  interface FastifyRequest {
    /** Employees in this request's answer, set by the routes that serve them. */
    employeesServed: number;
    /** The column keys of its answer (columns-served.ts), set with employeesServed. */
    columnsServed: string | null;
    /** The merit cycle a route without a :meritCycleId parameter read (the OData feed). */
    meritCycleServed: string | undefined;
    /** Its entry has been taken (a streamed answer's at its close: see recordRequest). */
    audited: boolean;
  }
}

export interface AuditLog {
  /**
   * The audit step of the pipeline: an entry for a request that carried a valid key, once
   * (a second call does nothing). A streamed answer is recorded when its response closes,
   * so that its entry counts what was sent, also when the client left part-way.
   */
  recordRequest(request: FastifyRequest, reply: FastifyReply): void;
  /** The columns a REST read of a cycle serves (columns-served.ts). */
  columnsOf(scope: ReadScope, meritCycleId: string): Promise<string | null>;
  /** Writes the entries waiting now (the web page and tests read the log after it). */
  flush(): Promise<void>;
}

export interface AuditOptions {
  /**
   * Writes request entries to this SQLite database in a thread with its own connection
   * (writer-thread.ts): `compplan serve` does. Undefined, or PostgreSQL: on the event
   * loop's thread, as the tests' in-process servers do (a thread started from the
   * TypeScript sources loads them again, most of a second per server).
   */
  writerThread?: DatabaseConfig | undefined;
  retentionDays?: number | undefined;
  /** Purges old entries periodically (`compplan serve`; tests purge by hand). */
  purge?: boolean;
  /** Benchmark only: records no request entries (config.ts, BENCH_AUDIT_LOG). */
  offForBenchmark?: boolean | undefined;
  /** Test only: the bound of entries kept while the database refuses them. */
  maxBuffered?: number | undefined;
}

const DAY_MS = 86_400_000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
// What is stored of a request's text fields: enough to read, bounded for a hostile client.
const MAX_PATH = 2_048;
const MAX_USER_AGENT = 512;
const MAX_ID = 200;

export default fp<AuditOptions>(
  async (app, options) => {
    const { registry } = app.metrics;
    const written = new Counter({
      name: 'compplan_audit_entries_written_total',
      help: 'Request entries written to the audit log.',
      registers: [registry],
    });
    const dropped = new Counter({
      name: 'compplan_audit_entries_dropped_total',
      help: 'Request entries of the audit log given up because the database refused them: buffer-full (more were waiting than the bound) or shutdown (still refused when the server stopped).',
      labelNames: ['reason'] as const,
      registers: [registry],
    });
    let loggedDrops = false;
    const off = options.offForBenchmark === true;
    // SQLite only (writer-thread.ts), and not in memory: such a database is one
    // connection's own, written where it is.
    const config = options.writerThread;
    const thread =
      config?.dialect === 'sqlite' && config.path !== ':memory:' && !off
        ? new AuditWriterThread(config)
        : undefined;
    const writer = new AuditWriter(
      thread?.write ?? writeDirectly(app.database),
      {
        written: (count) => written.inc(count),
        dropped: (count, reason) => {
          dropped.inc({ reason }, count);
          // One line when dropping begins (and each at shutdown), not one per entry.
          if (reason === 'shutdown' || !loggedDrops) {
            app.log.error(
              { dropped: count, reason },
              'audit log entries dropped: the database refuses to write them (compplan_audit_entries_dropped_total counts them)',
            );
          }
          if (reason === 'buffer-full') loggedDrops = true;
        },
        failing: (error) =>
          app.log.warn(
            { err: error },
            'cannot write audit log entries: they are kept in memory and tried again every second',
          ),
        recovered: () => {
          loggedDrops = false;
          app.log.info('audit log entries are written again');
        },
      },
      options.maxBuffered,
    );
    new Gauge({
      name: 'compplan_audit_entries_buffered',
      help: 'Request entries of the audit log waiting in memory to be written.',
      registers: [registry],
      collect() {
        this.set(writer.buffered);
      },
    });
    app.decorateRequest('employeesServed', 0);
    app.decorateRequest('columnsServed', null);
    app.decorateRequest('meritCycleServed', undefined);
    app.decorateRequest('audited', false);
    const cycleColumns = new CycleColumnsServed(app.database);
    app.decorate<AuditLog>('audit', {
      recordRequest(request, reply) {
        const key = request.apiKey;
        if (!key || off || request.audited) return;
        request.audited = true;
        const url = request.raw.url ?? '';
        const query = url.indexOf('?');
        // The API's path parameters all name a merit cycle: :meritCycleId, or :id of
        // /meritCycles/:id.
        const params = request.params as { meritCycleId?: unknown; id?: unknown } | undefined;
        const path = query === -1 ? url : url.slice(0, query);
        const cycle =
          params?.meritCycleId ??
          params?.id ??
          request.meritCycleServed ??
          (request.is404 ? undefined : routeConfigOf(request).cycleNamedBy?.(path));
        const agent = request.headers['user-agent'];
        const status = reply.statusCode;
        const employees = status === 200 ? request.employeesServed : 0;
        writer.push({
          at: Date.now(),
          organizationId: key.organizationId,
          keyId: key.id,
          method: request.method,
          route: request.is404 ? null : (routeConfigOf(request).url ?? null),
          path: path.slice(0, MAX_PATH),
          meritCycleId: typeof cycle === 'string' ? cycle.slice(0, MAX_ID) : null,
          status,
          employees,
          columnsServed: employees > 0 ? request.columnsServed : null,
          rowSliceId: key.rowSlice?.id ?? null,
          clientAddress: request.ip,
          userAgent: typeof agent === 'string' ? agent.slice(0, MAX_USER_AGENT) : null,
          requestId: request.id,
        });
      },
      columnsOf: (scope, meritCycleId) => cycleColumns.of(scope, meritCycleId),
      flush: () => writer.flush(),
    });
    // onClose runs once the requests in flight have been answered, and (hooks of plugins
    // registered later run first) before the database plugin's closes the database.
    app.addHook('onClose', async () => {
      await writer.close();
      await thread?.close();
    });

    if (options.purge) {
      const retentionMs = (options.retentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS) * DAY_MS;
      const purge = async () => {
        try {
          const removed = await purgeAuditEntries(app.database, new Date(Date.now() - retentionMs));
          if (removed > 0)
            app.log.info({ removed }, 'purged audit log entries past their retention');
        } catch (error) {
          app.log.warn({ err: error }, 'could not purge old audit log entries; trying again later');
        }
      };
      const timer = setInterval(() => void purge(), PURGE_EVERY_MS);
      timer.unref();
      app.addHook('onReady', () => {
        void purge();
      });
      app.addHook('onClose', () => clearInterval(timer));
    }
  },
  { name: 'audit', dependencies: ['database', 'metrics'] },
);
