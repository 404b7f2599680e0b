// ETag and If-None-Match for the API's 200 answers (docs/api-behaviour.md, "Conditional
// requests"). The tag is a hash of the exact JSON text the response carries, so it changes
// exactly when the body would, on every instance, with no state: a client that already
// holds the body gets 304 Not Modified without one, and that answer gives its request back
// to the key's quota (the pipeline's tag step).
//
// The tag is weak (W/"…"): the same JSON text is sent identity- or br/gzip-encoded, and a
// strong tag would have to differ per encoding. If-None-Match compares weakly anyway
// (RFC 9110 section 13.1.2), so clients see no difference.
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { routeConfigOf } from './route-config.js';

/** The ETag of a response body: 128 bits of SHA-256 of its text (or its UTF-8), base64url. */
export function etagOf(body: string | Buffer): string {
  // crypto.hash: one call, no Hash object (a small body's tag in a third of the time).
  return `W/"${hash('sha256', body, 'base64url').slice(0, 22)}"`;
}

// The tags of bodies sent as bytes, by the Buffer itself: an answer the response cache
// sends again (src/http/response-cache.ts) is hashed once. Buffers we send are never
// changed afterwards, and the map lets a body go when nothing else holds it.
const tagsOfBodies = new WeakMap<Buffer, string>();

/** The ETag of a body we send, computed once per Buffer. */
export function etagOfBody(body: string | Buffer): string {
  if (typeof body === 'string') return etagOf(body);
  let tag = tagsOfBodies.get(body);
  if (tag === undefined) {
    tag = etagOf(body);
    tagsOfBodies.set(body, tag);
  }
  return tag;
}

/** RFC 9110 section 13.1.2: `*`, or a list of tags compared weakly (W/ ignored). */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const candidate of header.split(',')) {
    const tag = candidate.trim();
    if (tag === '*' || tag === opaque || tag === `W/${opaque}`) return true;
  }
  return false;
}

/**
 * The tag step of the pipeline (src/http/pipeline.ts), for the API's routes: every 200
 * body is JSON by now (serialized text, or the employees page's stored texts as UTF-8
 * bytes) and not yet compressed (compression is the last step). Returns the body to send:
 * null for 304 Not Modified, whose request the pipeline gives back to the key's quota.
 */
export function conditionalGet(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): unknown {
  if (
    reply.statusCode !== 200 ||
    !routeConfigOf(request).api ||
    !(typeof payload === 'string' || Buffer.isBuffer(payload))
  ) {
    return payload;
  }
  // An answer the response cache sends compressed carries its plain body's tag already.
  const given = reply.getHeader('etag');
  const etag = typeof given === 'string' ? given : etagOfBody(payload);
  reply.header('etag', etag);
  const ifNoneMatch = request.headers['if-none-match'];
  if (typeof ifNoneMatch !== 'string' || !matchesIfNoneMatch(ifNoneMatch, etag)) return payload;
  // Not modified: no body and no body headers; the quota gets this request back.
  reply.code(304);
  reply.removeHeader('content-type');
  reply.removeHeader('content-length');
  reply.removeHeader('content-encoding');
  reply.removeHeader('vary');
  return null;
}
