// Keyset pagination shared by every list: fetch one row more than the page holds to
// learn whether another page follows, without counting.
import type { z } from 'zod';
import { badRequest } from '../errors.js';
import { CHANGED_FILTERS, type CursorCodec, type CursorScope } from './cursor.js';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

export interface PageRequest<Filters, After> {
  readonly filters: Filters;
  /** Sort key of the last item already returned; undefined on the first page. */
  readonly after: After | undefined;
  readonly limit: number;
}

/**
 * Resolves what page a request asks for. With a cursor, the cursor's filters apply; a
 * request that also names filters must name the same ones (docs/api-behaviour.md, "Pagination").
 */
export function resolvePageRequest<Filters, After>(options: {
  codec: CursorCodec;
  scope: CursorScope;
  cursor: string | undefined;
  limit: number;
  /** The filters the request itself gives, normalised; undefined when it gives none. */
  requestFilters: Filters | undefined;
  emptyFilters: Filters;
  filtersSchema: z.ZodType<Filters>;
  afterSchema: z.ZodType<After>;
}): PageRequest<Filters, After> {
  const { codec, scope, cursor, limit, requestFilters } = options;
  if (cursor === undefined) {
    return { filters: requestFilters ?? options.emptyFilters, after: undefined, limit };
  }
  const decoded = codec.decode(cursor, scope);
  // The cursor is signed, so these parse; a failure means a format we no longer read.
  const filters = options.filtersSchema.safeParse(decoded.filters);
  const after = options.afterSchema.safeParse(decoded.after);
  if (!filters.success || !after.success) throw badRequest('nextCursor is no longer valid');
  if (
    requestFilters !== undefined &&
    JSON.stringify(requestFilters) !== JSON.stringify(filters.data)
  ) {
    throw badRequest(CHANGED_FILTERS);
  }
  return { filters: filters.data, after: after.data, limit };
}

export interface Page<Row> {
  readonly rows: Row[];
  /** The last row of this page when another page follows, else undefined. */
  readonly last: Row | undefined;
}

/** `rows` was fetched with limit + 1: the extra row only says that more follow. */
export function toPage<Row>(rows: Row[], limit: number): Page<Row> {
  if (rows.length <= limit) return { rows, last: undefined };
  const pageRows = rows.slice(0, limit);
  return { rows: pageRows, last: pageRows[pageRows.length - 1] };
}

const PAGE_START = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

/**
 * A page's JSON as bytes, from items that are JSON already (an employee's stored text, or
 * a run of them joined by commas): `{"data":[` the items, `]`, then `fields` in order.
 * The pages of employees are sent this way, without serialization.
 */
export function pageOfJsonBytes(
  items: readonly Buffer[],
  fields: Readonly<Record<string, string | null>>,
): Buffer {
  const parts: Buffer[] = [PAGE_START];
  items.forEach((item, index) => {
    if (index > 0) parts.push(COMMA);
    parts.push(item);
  });
  let end = ']';
  for (const [name, value] of Object.entries(fields)) end += `,"${name}":${JSON.stringify(value)}`;
  parts.push(Buffer.from(`${end}}`));
  return Buffer.concat(parts);
}
