/**
 * A management request (keys, users, webhooks) that is refused: one line for the one who
 * asked, and nothing was changed. The command line prints it and exits 1
 * (src/cli/main.ts); the web application shows it beside the form.
 */
export class ManagementError extends Error {}

// The one error type the API answers with. The error handler turns it (and every other
// error) into the body that docs/api-behaviour.md defines ("Errors").

export interface ValidationIssue {
  /** The offending parameter, e.g. `limit` or `startDate[gte]`. */
  readonly path: string;
  readonly message: string;
  /** zod's issue code: too_big, too_small, invalid_type, invalid_value, … */
  readonly code: string;
}

export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    readonly statusCode: number,
    message: string,
    readonly validationErrors?: readonly ValidationIssue[],
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, message);

// One message for every kind of authentication failure (missing, malformed, unknown or
// revoked key), so that a caller learns nothing about which keys exist.
export const unauthorized = () => new ApiError(401, 'Missing or invalid API key');

// A valid key used from an address outside its allowlist (docs/api-keys.md).
export const addressRefused = () =>
  new ApiError(403, 'This API key may not be used from this address');

export const notFound = (what: string) => new ApiError(404, `${what} not found`);

export const RATE_LIMITED_MESSAGE = 'Too Many Requests';
