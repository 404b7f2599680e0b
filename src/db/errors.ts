// Which database failures are the database being unavailable, rather than a bug: those
// answer 503 (or 504 for a statement that ran out of time) with Retry-After, so that
// clients back off and retry, and the service recovers by itself when the database does.

export type DatabaseFailure = 'unavailable' | 'timeout';

/**
 * The server did not answer a statement within its bound (src/db/timeouts.ts): the
 * connection it was sent on has been closed. Unavailable (503), not a slow statement: a
 * server that answers cancels a slow statement itself, earlier (57014, 504).
 */
export class DatabaseNotAnswering extends Error {
  override name = 'DatabaseNotAnswering';
  readonly code = 'COMPPLAN_DATABASE_NOT_ANSWERING';
  constructor(readonly waitedMs: number) {
    super(`the database did not answer within ${waitedMs} ms; the connection was closed`);
  }
}

// Node socket errors on the way to PostgreSQL.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// PostgreSQL SQLSTATEs: class 08 connection exceptions; 57P01–57P03 shutdown / cannot
// connect now; 53300 too many connections.
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const QUERY_CANCELED = '57014'; // statement_timeout

// node-postgres and its pool say these in messages only.
const UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];

export function classifyDatabaseError(error: unknown): DatabaseFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (error instanceof DatabaseNotAnswering) return 'unavailable';
  if (typeof code === 'string') {
    if (code === QUERY_CANCELED) return 'timeout';
    if (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))
      return 'unavailable';
    // SQLite: another connection holds the write lock for longer than busy_timeout.
    if (code === 'SQLITE_BUSY') return 'unavailable';
  }
  if (UNAVAILABLE_MESSAGES.some((text) => error.message.includes(text))) return 'unavailable';
  // AggregateError from a connection attempt to several addresses.
  if (error instanceof AggregateError) return error.errors.map(classifyDatabaseError).find(Boolean);
  return undefined;
}
