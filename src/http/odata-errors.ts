// The feed's errors (docs/odata.md, "Errors"): the OData JSON error body
// `{ "error": { "code", "message" } }` with the status REST would give, for every answer
// under the feed's path, those of the pipeline (401, 429, 503, …) included. Routes throw
// ApiError as everywhere; the error handler writes the body (error-handler.ts).
import type { FastifyRequest } from 'fastify';

export const FEED_PREFIX = '/odata/';

/** Whether the request is one of the feed's (its path is under /odata/). */
export function isFeedRequest(request: FastifyRequest): boolean {
  return (request.raw.url ?? request.url).startsWith(FEED_PREFIX);
}

/** The OData error body of an answer with this status and message. */
export function odataErrorBody(statusCode: number, message: string) {
  return { error: { code: String(statusCode), message } };
}
