// Compressed answers (docs/api-behaviour.md, "Compression"). @fastify/compress encodes a
// body of 1 KiB or more for a client whose Accept-Encoding allows it, with the options
// below. The response cache (response-cache.ts) sends kept answers itself, and keeps each
// encoding of one once made: most clients ask for compression (browsers, curl
// --compressed, Python's requests, Node's fetch), and compressing a kept 46 KB page again
// on every read cost 1.2–1.5 ms of CPU a request, five times what the rest of a kept
// answer costs (docs/benchmarks.md).
// Both choose the encoding, and encode, the same way, so that a client gets the same
// bytes whether its answer was just built or kept.
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyRequest } from 'fastify';

export type Encoding = 'br' | 'gzip' | 'deflate';

// The server's preference among encodings a client accepts equally (@fastify/compress's
// own order; Node 20 has no zstd).
const ENCODINGS: (Encoding | 'identity')[] = ['br', 'gzip', 'deflate', 'identity'];
// Smaller bodies gain little and still cost a compressor's set-up.
const THRESHOLD_BYTES = 1_024;
// Bodies up to this size are compressed at once, on the event loop, rather than streamed
// through zlib's thread pool: a page of 100 employees (46 KB) took about 0.3 ms of CPU to
// brotli-compress at once and about 1.8 ms streamed (docs/benchmarks.md), and on a 2-core
// machine @fastify/compress's own default would stream anything over 8 KiB. A body near
// this size blocks the loop for about 2 ms; larger ones are streamed.
const SYNC_THRESHOLD_BYTES = 256 * 1_024;
// Quality 4, @fastify/compress's default: brotli's own default (11) costs many times the
// CPU for a few per cent less.
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

/** The options @fastify/compress is registered with (app.ts). */
export const compressionOptions = {
  global: true,
  // The API takes no request bodies, and the web application's forms are small and plain.
  globalDecompression: false,
  encodings: ENCODINGS,
  threshold: THRESHOLD_BYTES,
  syncThreshold: SYNC_THRESHOLD_BYTES,
  brotliOptions: BROTLI_OPTIONS,
};

const ENCODERS: Record<Encoding, (body: Buffer) => Buffer> = {
  br: (body) => brotliCompressSync(body, BROTLI_OPTIONS),
  gzip: (body) => gzipSync(body),
  deflate: (body) => deflateSync(body),
};

/**
 * The encoding @fastify/compress would send a JSON body of this size in, for this
 * request; undefined: as it is.
 */
export function encodingFor(request: FastifyRequest, bodyBytes: number): Encoding | undefined {
  if (bodyBytes < THRESHOLD_BYTES || request.headers['x-no-compression'] !== undefined) {
    return undefined;
  }
  const accepted = request.headers['accept-encoding'];
  if (accepted === undefined) return undefined;
  // As @fastify/compress reads the header: `*` and `x-gzip` stand for gzip.
  const chosen = negotiate(accepted.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), ENCODINGS);
  return chosen === null || chosen === 'identity' ? undefined : chosen;
}

export function encode(body: Buffer, encoding: Encoding): Buffer {
  return ENCODERS[encoding](body);
}
