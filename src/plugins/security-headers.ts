// Security headers for the API's JSON responses (OWASP API8, security misconfiguration).
// A JSON API is never a page: nothing in a response may run, be framed, be sniffed into
// another type, be cached on the way, or send a Referer anywhere. HTML (the web
// application under /app, the reference under /docs) keeps the headers its own scope
// sets: only JSON responses are touched here, and a header a route already set stays.
import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

export const API_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  // Nothing a JSON body could be turned into may load or run anything, or be framed.
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Responses carry one organisation's data under a key: no shared or browser cache may
  // keep them (a proxy would otherwise serve them to the next caller of the same URL).
  'cache-control': 'no-store',
});

const isJson = (reply: FastifyReply) => {
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && type.startsWith('application/json');
};

export default fp(
  async (app) => {
    app.addHook('onSend', async (_request, reply, payload) => {
      if (!isJson(reply)) return payload;
      for (const [name, value] of Object.entries(API_RESPONSE_HEADERS)) {
        if (!reply.hasHeader(name)) reply.header(name, value);
      }
      return payload;
    });
  },
  { name: 'security-headers' },
);
