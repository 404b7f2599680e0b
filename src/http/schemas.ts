// Schemas shared by every route: the error bodies (docs/api-behaviour.md, "Errors") and
// the query parameters and envelope of pagination ("Pagination"). One schema validates, types and
// (through the OpenAPI document) documents each of them.
import type { HTTPMethods } from 'fastify';
import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page.js';

export const ValidationErrorItem = z
  .object({
    path: z.string().describe('The offending parameter, e.g. `limit`.'),
    message: z.string(),
    code: z
      .string()
      .describe('zod issue code, e.g. `too_big`, `invalid_value`, `unrecognized_keys`.'),
  })
  .meta({ id: 'ValidationErrorItem' });

export const ErrorBody = z
  .object({
    timestamp: z.iso.datetime().describe('When the error happened, ISO 8601 UTC.'),
    path: z.string().describe('The request path, without the query string.'),
    message: z.string(),
    statusCode: z.int(),
    validationErrors: z.array(ValidationErrorItem).optional(),
  })
  .meta({ id: 'ErrorBody' });

export const RateLimitBody = z
  .object({ message: z.literal('Too Many Requests'), statusCode: z.literal(429) })
  .meta({ id: 'RateLimitBody' });

/**
 * Every API route answers GET and HEAD itself (rather than through Fastify's generated
 * HEAD routes), so that a HEAD response passes the same hooks as GET, compression
 * included, and carries exactly GET's headers.
 */
export const READ_METHODS: HTTPMethods[] = ['GET', 'HEAD'];

/** Routes that take no query parameters still refuse unknown ones (docs/api-behaviour.md). */
export const NoQuery = z.strictObject({});

export const errorResponses = {
  400: ErrorBody.describe('Bad request, e.g. an invalid or foreign cursor.'),
  401: ErrorBody.describe('Missing or invalid API key.'),
  403: ErrorBody.describe(
    'The API key may not be used from this client address (its address allowlist).',
  ),
  404: ErrorBody.describe('Not found, or not visible to this key.'),
  410: ErrorBody.describe('The deltaToken has expired: sync in full again, without it.'),
  422: ErrorBody.describe('Invalid query parameters, listed in validationErrors.'),
  429: RateLimitBody.describe('Rate limit exceeded.'),
  500: ErrorBody.describe('Internal server error.'),
} as const;

/** What every API route may answer a request that carried a key, whatever it reads. */
export const keyedErrorResponses = {
  401: errorResponses[401],
  403: errorResponses[403],
  422: errorResponses[422],
  429: errorResponses[429],
} as const;

/** The same, for a route of one merit cycle: 404 for one that is absent or out of scope. */
export const cycleErrorResponses = { ...keyedErrorResponses, 404: errorResponses[404] } as const;

// Query values arrive as text. Only plain decimal integers become numbers; anything else
// ("abc", "2.5", "", "1e2") stays text so that zod reports invalid_type for it, rather
// than coercing "" to 0 or "1e2" to 100.
const integerText = (value: unknown) =>
  typeof value === 'string' && /^[+-]?\d+$/.test(value) ? Number(value) : value;

export const limitParam = z
  .preprocess(
    integerText,
    // Bounds first and each final (abort), so that a number past the safe integers is
    // one too_big, not also "not a whole number".
    z
      .number({ error: 'must be a whole number' })
      .max(MAX_PAGE_SIZE, { message: `must be at most ${MAX_PAGE_SIZE}`, abort: true })
      .min(1, { message: 'must be at least 1', abort: true })
      .int({ message: 'must be a whole number' }),
  )
  .default(DEFAULT_PAGE_SIZE)
  .describe(`Page size, 1 to ${MAX_PAGE_SIZE}.`);

export const nextCursorParam = z
  .string()
  .min(1)
  .optional()
  .describe('The nextCursor of the previous page, unchanged.');

export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      data: z.array(item),
      nextCursor: z.string().nullable().describe('Cursor of the next page; null on the last page.'),
    })
    .meta({ id });
}
