// Compressed answers (docs/api-behaviour.md, "Compression"): the pipeline's last step
// before a response is sent (src/http/pipeline.ts), for every route — the API's JSON, the
// web application's pages, the reference's assets — and the one place that chooses an
// encoding. The response cache (response-cache.ts) keeps each encoding of a kept answer
// once made, through `encode` below, so that a client gets the same bytes whether its
// answer was just built or kept.
//
// The encoding is chosen by `negotiator` (jshttp's, Express's negotiation), which reads
// Accept-Encoding as RFC 9110 section 12.5.3 does: `q=0` means "not acceptable", a named
// coding outranks `*`, and identity is acceptable unless excluded.
import { Readable, pipeline as streamPipeline } from 'node:stream';
import { promisify } from 'node:util';
import {
  brotliCompress,
  brotliCompressSync,
  constants,
  createBrotliCompress,
  createDeflate,
  createGzip,
  deflate,
  deflateSync,
  gzip,
  gzipSync,
} from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';

export type Encoding = 'br' | 'gzip' | 'deflate';

// The server's preference among encodings a client accepts equally (Node 20 has no zstd).
const OFFERED: (Encoding | 'identity')[] = ['br', 'gzip', 'deflate', 'identity'];
// Smaller bodies gain little and still cost a compressor's set-up.
const THRESHOLD_BYTES = 1_024;
// Bodies up to this size are compressed at once, on the event loop, rather than in zlib's
// thread pool: a page of 100 employees (46 KB) takes about 0.3 ms of CPU to brotli-compress
// at once and about 1.8 ms through the thread pool. Larger bodies go to the pool.
const SYNC_THRESHOLD_BYTES = 256 * 1_024;
// Quality 4: brotli's own default (11) costs many times the CPU for a few per cent less.
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };
// Text that compresses: JSON (and NDJSON), HTML, CSS, JavaScript, SVG, CSV, plain text.
const COMPRESSIBLE = /^(?:application\/(?:json|x-ndjson|javascript)|text\/|image\/svg\+xml)/;

const ENCODE_NOW: Record<Encoding, (body: Buffer) => Buffer> = {
  br: (body) => brotliCompressSync(body, BROTLI_OPTIONS),
  gzip: (body) => gzipSync(body),
  deflate: (body) => deflateSync(body),
};
const brotliInPool = promisify(brotliCompress);
const gzipInPool = promisify(gzip);
const deflateInPool = promisify(deflate);
const ENCODE_IN_POOL: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => brotliInPool(body, BROTLI_OPTIONS),
  gzip: (body) => gzipInPool(body),
  deflate: (body) => deflateInPool(body),
};
const ENCODER_STREAMS = {
  br: () => createBrotliCompress(BROTLI_OPTIONS),
  gzip: () => createGzip(),
  deflate: () => createDeflate(),
};

// negotiator 1.x breaks ties between equally acceptable encodings by the server's
// preference when given one (else by the header's order); @types/negotiator (0.6) does not
// list the option yet.
interface PreferringNegotiator {
  encoding(
    available: readonly string[],
    options: { preferred: readonly string[] },
  ): string | undefined;
}

// Clients send a handful of distinct headers; each is negotiated once.
const negotiated = new LRUCache<string, Encoding | 'identity'>({ max: 512 });

// The server's order among equally acceptable codings: brotli first where the client names
// it; gzip for a bare `*` (any coding), the one every client decodes.
const FOR_NAMED: (Encoding | 'identity')[] = OFFERED;
const FOR_WILDCARD: (Encoding | 'identity')[] = ['gzip', 'br', 'deflate', 'identity'];
const NAMES_A_CODING = /\b(?:br|gzip|deflate)\b/;

function negotiate(acceptEncoding: string): Encoding | 'identity' {
  let chosen = negotiated.get(acceptEncoding);
  if (chosen === undefined) {
    // RFC 9110 section 18.6: x-gzip is gzip.
    const header = acceptEncoding.toLowerCase().replace(/\bx-gzip\b/g, 'gzip');
    const negotiator = new Negotiator({
      headers: { 'accept-encoding': header },
    }) as unknown as PreferringNegotiator;
    const preferred = NAMES_A_CODING.test(header) ? FOR_NAMED : FOR_WILDCARD;
    // Nothing acceptable at all (identity;q=0 and every coding refused): identity anyway,
    // as most servers answer, rather than 406 to a GET of JSON.
    chosen = (negotiator.encoding(OFFERED, { preferred }) ?? 'identity') as Encoding | 'identity';
    negotiated.set(acceptEncoding, chosen);
  }
  return chosen;
}

/** The encoding to send a body of this size in for this request; undefined: as it is. */
export function encodingFor(request: FastifyRequest, bodyBytes: number): Encoding | undefined {
  if (bodyBytes < THRESHOLD_BYTES || request.headers['x-no-compression'] !== undefined) {
    return undefined;
  }
  const accepted = request.headers['accept-encoding'];
  if (accepted === undefined) return undefined;
  const chosen = negotiate(accepted);
  return chosen === 'identity' ? undefined : chosen;
}

/** The body in an encoding, made at once (the response cache keeps what this returns). */
export function encode(body: Buffer, encoding: Encoding): Buffer {
  return ENCODE_NOW[encoding](body);
}

/** Marks a reply whose body depends on Accept-Encoding, keeping any Vary already set. */
function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) reply.header('vary', 'accept-encoding');
  else if (!/\baccept-encoding\b/i.test(String(vary)))
    reply.header('vary', `${vary}, accept-encoding`);
}

// Replies whose stream is being encoded here. One that comes back through this step is the
// error answer of a stream that failed before its first byte went out: its Content-Encoding
// was set for the stream, not for the error's body.
const encodingStreams = new WeakSet<FastifyReply>();

/**
 * The compression step of the pipeline: the body to send. A body is encoded when it is
 * text of 1 KiB or more and the client accepts an encoding (at once, or a promise of it
 * from zlib's thread pool for a large body); a body already encoded (a kept answer sent by
 * the response cache) and answers without a body are left alone.
 */
export function compress(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (encodingStreams.delete(reply)) reply.removeHeader('content-encoding');
  if (payload === null || payload === undefined || reply.hasHeader('content-encoding')) {
    return payload;
  }
  const status = reply.statusCode;
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return payload;
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return payload;

  if (payload instanceof Readable) {
    // A file (the reference's assets), compressed as it is read; its Content-Length, when
    // given, decides as a body's length does.
    const length = Number(reply.getHeader('content-length') ?? Number.POSITIVE_INFINITY);
    varyOnEncoding(reply);
    const encoding = encodingFor(request, length);
    if (encoding === undefined) return payload;
    reply.removeHeader('content-length');
    reply.header('content-encoding', encoding);
    encodingStreams.add(reply);
    // stream.pipeline, not pipe: a source that fails destroys the encoder with its error, and
    // Fastify then ends the response and closes the connection at once (pipe would leave
    // the encoder open and the client waiting for the socket's timeout); a client that
    // leaves destroys the encoder, and stream.pipeline the source. Fastify logs the error.
    return streamPipeline(payload, ENCODER_STREAMS[encoding](), () => {});
  }
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  // Measured without a copy: most answers are small, and a string becomes bytes only
  // when it is to be compressed.
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  if (length < THRESHOLD_BYTES) return payload;
  varyOnEncoding(reply);
  const encoding = encodingFor(request, length);
  if (encoding === undefined) return payload;
  reply.header('content-encoding', encoding);
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return body.length <= SYNC_THRESHOLD_BYTES
    ? ENCODE_NOW[encoding](body)
    : ENCODE_IN_POOL[encoding](body);
}
