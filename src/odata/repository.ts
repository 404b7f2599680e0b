// The feed's reads: a page of an entity set in keyset order, and a count, each one
// statement over the set's source (sources.ts: the tenant and scope conditions) and the
// request's filter (filter.ts).
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { SortKey, Source } from './sources.js';

type Sql = RawBuilder<unknown>;
export type Row = Record<string, unknown>;

export interface PageQuery {
  filter: Sql | null;
  order: readonly SortKey[];
  /** The sort key values of the last row already served; null on the first page. */
  after: readonly unknown[] | null;
  offset: number;
  /** Rows to read: the page's, and one more when another page may follow. */
  limit: number;
}

/**
 * Rows after `values` in `order`: a row-value comparison where every key goes the same way
 * (one range scan of an index in that order), else each key in turn.
 */
function afterCondition(order: readonly SortKey[], values: readonly unknown[]): Sql {
  const first = order[0] as SortKey;
  if (order.every((key) => key.descending === first.descending)) {
    const columns = sql.join(order.map((key) => sql.ref(key.column)));
    const bounds = sql.join(values.map((value) => sql`${value}`));
    return sql`(${columns}) ${sql.raw(first.descending ? '<' : '>')} (${bounds})`;
  }
  let condition: Sql | null = null;
  for (let index = order.length - 1; index >= 0; index--) {
    const key = order[index] as SortKey;
    const column = sql.ref(key.column);
    const beyond = sql`${column} ${sql.raw(key.descending ? '<' : '>')} ${values[index]}`;
    condition = condition
      ? sql`(${beyond} or (${column} = ${values[index]} and ${condition}))`
      : beyond;
  }
  return condition as Sql;
}

export async function readPage(db: Db, source: Source, query: PageQuery): Promise<Row[]> {
  const conditions: Sql[] = [];
  if (query.filter) conditions.push(query.filter);
  if (query.after) conditions.push(afterCondition(query.order, query.after));
  const where = conditions.length === 0 ? sql`` : sql` and ${sql.join(conditions, sql` and `)}`;
  const orderBy = sql.join(
    query.order.map((key) => sql`${sql.ref(key.column)}${sql.raw(key.descending ? ' desc' : '')}`),
  );
  const offset = query.offset > 0 ? sql` offset ${query.offset}` : sql``;
  const { rows } = await sql<Row>`select ${source.columns} ${source.rows}${where}
    order by ${orderBy} limit ${query.limit}${offset}`.execute(db);
  return rows;
}

export async function countRows(db: Db, source: Source, filter: Sql | null): Promise<number> {
  const where = filter ? sql` and ${filter}` : sql``;
  const { rows } = await sql<{
    count: number | string;
  }>`select count(*) as count ${source.rows}${where}`.execute(db);
  return Number(rows[0]?.count ?? 0);
}
