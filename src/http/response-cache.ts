// The API's answers kept in memory and sent again while they are still what the database
// would answer (docs/api-behaviour.md, "Caching"). A 200 answer of a route that declares
// `config: { cacheAnswers: true }` depends only on what the key may read (its organisation,
// and the cycle scope and hidden columns of a restricted key: ReadScope's fingerprint),
// the URL and the imported data; the data changes only by an import, and src/db/data-revision.ts says
// whether one has committed since the answer was built. So a cached answer is never
// stale, nothing has to expire it, and every instance keeps its own.
//
// Authentication and the quota run first, as for any request (src/http/pipeline.ts). A
// kept answer is looked up right after them, before the query is validated: only a valid URL ever got a 200 to
// keep, and the same URL validates the same way whatever the data. What a hit skips is
// validation, the database read and the serialization; the answer's ETag is computed
// once per kept body (src/http/etag.ts), and each compressed form of it once, when a
// client first asks for that encoding (src/http/compression.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Gauge } from 'prom-client';
import { readScopeOf } from './authentication.js';
import { encode, encodingFor } from './compression.js';
import { etagOfBody } from './etag.js';
import { KeptAnswers, type KeptAnswersLimits } from './kept-answers.js';
import { routeConfigOf } from './route-config.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 200 answers depend only on what the key may read, the URL and the imported data. */
    cacheAnswers?: boolean;
  }
  interface FastifyRequest {
    /** The data revision a cacheable answer is being built at; undefined: not kept. */
    answerRevision: number | undefined;
  }
}

// What the cache may hold: about 350 pages of 100 employees, enough for the pages that
// dashboards and reports read again and again, small beside the server's memory target
// (docs/benchmarks.md); a quarter of it at most for any one organisation. A single answer
// larger than 1 MiB is not kept. No answer is kept longer than 10 s: the bound should
// an import's notice never arrive (PgBouncer in transaction mode between
// compplan and PostgreSQL accepts LISTEN but delivers nothing). Rebuilding a busy page
// every 10 s costs nothing measurable.
const LIMITS: KeptAnswersLimits = {
  bytes: 16 * 1024 * 1024,
  organizationBytes: 4 * 1024 * 1024,
  answerBytes: 1024 * 1024,
  maxAgeMs: 10_000,
};

export interface ResponseCache {
  /** Step 4 of the pipeline: sends a kept answer that is still current; the reply when it did. */
  answerFromCache(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined;
  /** Step 7: keeps what a cacheable route built; the body to send on. */
  keepAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown;
}

/** The cache of the API's answers; routes opt in with `config: { cacheAnswers: true }`. */
export function responseCache(app: FastifyInstance): ResponseCache {
  const { revision } = app.database;
  const counted = app.metrics.responseCache;
  const hits = counted.labels({ result: 'hit' });
  const misses = counted.labels({ result: 'miss' });
  const unusable = counted.labels({ result: 'off' });
  const answers = new KeptAnswers(LIMITS);
  new Gauge({
    name: 'compplan_response_cache_bytes',
    help: 'Bytes the response cache holds: kept answers, their compressed forms and bookkeeping (at most 16 MiB, 4 MiB per organisation).',
    registers: [app.metrics.registry],
    collect() {
      this.set(answers.bytes);
    },
  });

  app.decorateRequest('answerRevision', undefined);
  app.addHook('onReady', async () => {
    await revision.watch((error) =>
      app.log.warn(
        { err: error },
        'answers are not cached until the database can tell this server of imports again',
      ),
    );
  });
  app.addHook('onClose', async () => {
    await revision.close();
  });

  return {
    answerFromCache(request, reply) {
      if (request.method !== 'GET' || routeConfigOf(request).cacheAnswers !== true) return;
      const current = revision.current();
      if (current === undefined) {
        unusable.inc();
        return;
      }
      const reader = readScopeOf(request);
      const answer = answers.get(reader, request.url);
      if (answer?.revision !== current) {
        misses.inc();
        request.answerRevision = current;
        return;
      }
      hits.inc();
      request.employeesServed = answer.employees;
      request.columnsServed = answer.columnsServed;
      reply.type(answer.contentType);
      const encoding = encodingFor(request, answer.body.length);
      if (encoding === undefined) return reply.send(answer.body as never);
      let encoded = answer.encoded[encoding];
      if (encoded === undefined) {
        encoded = encode(answer.body, encoding);
        answers.addEncoding(reader, request.url, encoding, encoded);
      }
      // The plain body's ETag (the same for every encoding), and the headers the
      // compression step would set; it leaves an encoded body alone.
      return reply
        .header('content-encoding', encoding)
        .header('vary', 'accept-encoding')
        .header('etag', etagOfBody(answer.body))
        .send(encoded as never);
    },

    // Before the tag step, which may turn a 200 into a 304 without a body: the body is
    // still the one to keep.
    keepAnswer(request, reply, payload) {
      const built = request.answerRevision;
      if (built === undefined || reply.statusCode !== 200) return payload;
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
      const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
      const contentType = reply.getHeader('content-type');
      if (typeof contentType === 'string') {
        answers.keep(readScopeOf(request), request.url, {
          body,
          contentType,
          revision: built,
          encoded: {},
          employees: request.employeesServed,
          columnsServed: request.columnsServed,
        });
      }
      // The same Buffer goes out now, so its ETag is computed once for this and every hit.
      return body;
    },
  };
}
