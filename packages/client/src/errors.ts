// The errors the client throws: one small class tree, so that callers can catch what they
// can act on (`instanceof RateLimitError`) and always have the status and the request id
// to quote when they report a problem.
import type { components } from './generated/openapi.js';

export type ValidationErrorItem = components['schemas']['ValidationErrorItem'];

export interface CompplanErrorDetails {
  message: string;
  /** HTTP status; undefined when no response arrived (ConnectionError). */
  status?: number | undefined;
  /** The x-request-id of the response: quote it when reporting a problem. */
  requestId?: string | undefined;
  /** The parsed response body, when there was one. */
  body?: unknown;
  /** The request, e.g. `GET /v1/compensationPlanning/meritCycles`. */
  request?: string | undefined;
  cause?: unknown;
}

/** Every error the client throws, except the caller's own abort (its signal's reason). */
export class CompplanError extends Error {
  override name = 'CompplanError';
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly body: unknown;
  readonly request: string | undefined;

  constructor(details: CompplanErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.requestId = details.requestId;
    this.body = details.body;
    this.request = details.request;
  }
}

/** 401: the key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends CompplanError {
  override name = 'AuthenticationError';
}

/** 404: no such merit cycle for this key (or no such path). */
export class NotFoundError extends CompplanError {
  override name = 'NotFoundError';
}

/** 400 or 405: the request itself is wrong, e.g. a cursor from another list. */
export class InvalidRequestError extends CompplanError {
  override name = 'InvalidRequestError';
}

/**
 * 410: the deltaToken is older than the server keeps removals (CHANGE_RETENTION_DAYS).
 * Sync in full again: iterate a delta without a token, and keep its new token.
 */
export class DeltaTokenExpiredError extends CompplanError {
  override name = 'DeltaTokenExpiredError';
}

/** 422: invalid query parameters, each named in `items`. */
export class ValidationError extends CompplanError {
  override name = 'ValidationError';
  readonly items: readonly ValidationErrorItem[];

  constructor(details: CompplanErrorDetails & { items: readonly ValidationErrorItem[] }) {
    super(details);
    this.items = details.items;
  }
}

/** 429 after every retry: the key's quota (or the address's failed logins) ran out. */
export class RateLimitError extends CompplanError {
  override name = 'RateLimitError';
  /** Seconds the server asked to wait (Retry-After); undefined when it did not say. */
  readonly retryAfter: number | undefined;

  constructor(details: CompplanErrorDetails & { retryAfter: number | undefined }) {
    super(details);
    this.retryAfter = details.retryAfter;
  }
}

/** 5xx: the server failed (500) or could not serve for now (503, 504). */
export class ServerError extends CompplanError {
  override name = 'ServerError';
}

/** No response: the server could not be reached, the connection broke, or it timed out. */
export class ConnectionError extends CompplanError {
  override name = 'ConnectionError';
}

/** No response within the client's timeout. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}

/** The error for an HTTP response that is not a success. */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: Headers,
  request: string,
): CompplanError {
  const requestId = headers.get('x-request-id') ?? undefined;
  const serverMessage =
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { message?: unknown }).message === 'string'
      ? (body as { message: string }).message
      : `HTTP ${status}`;
  const message = `${request}: ${status} ${serverMessage}${requestId ? ` (request id ${requestId})` : ''}`;
  const details = { message, status, requestId, body, request };
  if (status === 401) return new AuthenticationError(details);
  if (status === 404) return new NotFoundError(details);
  if (status === 410) return new DeltaTokenExpiredError(details);
  if (status === 422) {
    const items = (body as { validationErrors?: ValidationErrorItem[] } | null)?.validationErrors;
    return new ValidationError({ ...details, items: Array.isArray(items) ? items : [] });
  }
  if (status === 429)
    return new RateLimitError({ ...details, retryAfter: retryAfterSeconds(headers) });
  if (status >= 500) return new ServerError(details);
  return new InvalidRequestError(details);
}

/** Retry-After in seconds (a number of seconds or an HTTP date); undefined when absent. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}
