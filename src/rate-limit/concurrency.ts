// A bound on the requests one key has in flight at once, in this instance (OWASP API4,
// unrestricted resource consumption). The per-second quota bounds how often a key may
// start requests; this bounds how much of the instance it may hold while they run — slow
// readers, deep pages on a slow database — so that one client cannot take every
// PostgreSQL connection (10 per instance) and stall every other organisation.
//
// MAX_IN_FLIGHT_PER_KEY = 8: below the pool of 10, so two connections always stay for
// other keys; far above what a well-behaved client needs (a page walk is sequential, one
// request at a time; the quota of 10 a second allows a few parallel reads). A request over
// the bound gets the rate-limit answer: 429, the fixed body, Retry-After: 1. A request
// leaves the count when its response is finished or its connection closes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendTooManyRequests } from './plugin.js';

export const MAX_IN_FLIGHT_PER_KEY = 8;

/** An onRequest hook for the API scope, after authentication has set `request.apiKey`. */
export function limitInFlightPerKey(max = MAX_IN_FLIGHT_PER_KEY) {
  const inFlight = new Map<string, number>();
  return async function limitInFlight(
    this: FastifyInstance,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    const id = request.apiKey?.id;
    if (id === undefined) return;
    const running = inFlight.get(id) ?? 0;
    if (running >= max) {
      this.metrics.rateLimited.inc({ limit: 'concurrency' });
      return sendTooManyRequests(reply, 1);
    }
    inFlight.set(id, running + 1);
    // 'close' comes exactly once: after the response is sent, or when the client left.
    reply.raw.once('close', () => {
      const left = (inFlight.get(id) ?? 1) - 1;
      if (left > 0) inFlight.set(id, left);
      else inFlight.delete(id);
    });
  };
}
