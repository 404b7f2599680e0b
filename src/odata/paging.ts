// Server-driven paging (docs/odata.md, "Paging"): a page ends with @odata.nextLink, the
// same request with a $skiptoken that carries the sort key of the page's last entity and
// what is left of $top. The token is a cursor of the REST API's kind (pagination/cursor.ts):
// signed, stateless, bound to the key's scope and to the entity set (and cycle), and to the
// request's other options, so an edited token or an edited query is refused.
import { ApiError } from '../errors.js';
import type { CursorCodec, CursorScope } from '../pagination/cursor.js';
import type { EntitySetName } from './model.js';

export const DEFAULT_PAGE_SIZE = 1_000;

export interface SkipState {
  /** The sort key values of the last entity served. */
  after: unknown[];
  /** What is left of $top; null without one. */
  remaining: number | null;
}

/** Options a token does not carry, and the next link does not repeat. */
const CARRIED = new Set(['$skiptoken', '$top', '$skip', '$format']);

/** The options that must stay the same from page to page, in a stable form. */
function queryOf(given: ReadonlyMap<string, string>): string[][] {
  return [...given].filter(([name]) => !CARRIED.has(name)).sort(([a], [b]) => (a < b ? -1 : 1));
}

export function listOf(
  set: EntitySetName,
  reader: string,
  meritCycleId: string | undefined,
): CursorScope {
  return {
    endpoint: `odata${set}`,
    reader,
    ...(meritCycleId !== undefined && { meritCycleId }),
  };
}

export function encodeSkipToken(
  codec: CursorCodec,
  list: CursorScope,
  given: ReadonlyMap<string, string>,
  state: SkipState,
): string {
  return codec.encode(list, queryOf(given), state);
}

const CHANGED =
  '$skiptoken belongs to a request with other options: follow @odata.nextLink unchanged';

/** The state a $skiptoken carries; 400 for a token not ours, of another list or query. */
export function decodeSkipToken(
  codec: CursorCodec,
  list: CursorScope,
  token: string,
  given: ReadonlyMap<string, string>,
): SkipState {
  if (given.has('$top') || given.has('$skip')) {
    throw new ApiError(400, '$skiptoken carries $top and $skip: follow @odata.nextLink unchanged');
  }
  let decoded: { filters: unknown; after: unknown };
  try {
    decoded = codec.decode(token, list);
  } catch {
    throw new ApiError(400, '$skiptoken is not valid: follow @odata.nextLink unchanged');
  }
  if (JSON.stringify(decoded.filters) !== JSON.stringify(queryOf(given))) {
    throw new ApiError(400, CHANGED);
  }
  const state = decoded.after as SkipState;
  if (!Array.isArray(state?.after)) throw new ApiError(400, '$skiptoken is no longer valid');
  return state;
}

/** The next page's URL: the request's URL, its options but $top/$skip, and the token. */
export function nextLink(
  resourceUrl: string,
  given: ReadonlyMap<string, string>,
  token: string,
): string {
  const options = [...given]
    .filter(([name]) => !CARRIED.has(name) || name === '$format')
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
  options.push(`$skiptoken=${encodeURIComponent(token)}`);
  return `${resourceUrl}?${options.join('&')}`;
}
