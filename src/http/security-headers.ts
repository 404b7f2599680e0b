// Security headers for the API's JSON responses (OWASP API8, security misconfiguration).
// A JSON API is never a page: nothing in a response may run, be framed, be sniffed into
// another type, be cached on the way, or send a Referer anywhere. HTML (the web
// application under /app, the reference under /docs) keeps the headers its own scope
// sets: only JSON responses are touched here, and a header a route already set stays.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { routeConfigOf } from './route-config.js';

export const API_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  // Nothing a JSON body could be turned into may load or run anything, or be framed.
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Responses carry one organisation's data under a key: no shared or browser cache may
  // keep them (a proxy would otherwise serve them to the next caller of the same URL).
  'cache-control': 'no-store',
});

const HEADER_ENTRIES = Object.entries(API_RESPONSE_HEADERS);

const isJson = (reply: FastifyReply) => {
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && type.startsWith('application/json');
};

/**
 * The secure step of the pipeline (src/http/pipeline.ts), before an answer is sent: every
 * JSON answer, and every answer of an API route (a 304 has no content type).
 */
export function secureJson(request: FastifyRequest, reply: FastifyReply): void {
  if (!isJson(reply) && !routeConfigOf(request).api) return;
  for (const [name, value] of HEADER_ENTRIES) {
    if (!reply.hasHeader(name)) reply.header(name, value);
  }
}
