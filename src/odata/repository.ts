// The feed's reads: a page of an entity set in keyset order (one statement, two where a
// page crosses from one cycle to the next), and a count, over the set's source
// (sources.ts: the tenant and scope conditions) and the request's filter (filter.ts).
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { PLANNED_EACH_TIME } from '../db/statement-cache.js';
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

/** The SQL a key orders by: its expression, or its column. */
const keySql = (key: SortKey): Sql => key.expression ?? sql.ref(key.column);

/**
 * Rows after `values` in `order`, where keys may be null: null comes first ascending and
 * last descending (OData, URL Conventions 5.1.1.8; the ORDER BY of pageSql says so too).
 */
function afterNullable(order: readonly SortKey[], values: readonly unknown[]): Sql {
  let condition: Sql | null = null;
  for (let index = order.length - 1; index >= 0; index--) {
    const key = order[index] as SortKey;
    const value = values[index];
    const column = keySql(key);
    let beyond: Sql;
    let equal: Sql;
    if (value === null || value === undefined) {
      // Ascending, non-null values follow the nulls; descending, nothing follows them.
      beyond = key.descending ? sql`(1 = 0)` : sql`(${column} is not null)`;
      equal = sql`(${column} is null)`;
    } else {
      const greater = sql`${column} ${sql.raw(key.descending ? '<' : '>')} ${value}`;
      beyond = key.descending && key.nullable ? sql`(${greater} or ${column} is null)` : greater;
      equal = sql`${column} = ${value}`;
    }
    condition = condition ? sql`(${beyond} or (${equal} and ${condition}))` : beyond;
  }
  return condition as Sql;
}

/**
 * Rows after `values` in `order`: a row-value comparison where every key goes the same way
 * (one range scan of an index in that order), else each key in turn.
 */
function afterCondition(order: readonly SortKey[], values: readonly unknown[]): Sql {
  const first = order[0] as SortKey;
  if (order.some((key) => key.nullable || key.expression)) return afterNullable(order, values);
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

/**
 * The rows of a page, in `query.order`. A position in an order whose first key only groups
 * rows (the employees' cycle) is read as up to two range scans of the index: the rest of
 * the position's group, then, when that is less than a page, the groups after it. One
 * row-value comparison over the whole key would be a range only on its first key: each
 * page would read its group from the start (on SQLite), a walk of a 100,000-employee
 * cycle twenty times over.
 */
export async function readPage(db: Db, source: Source, query: PageQuery): Promise<Row[]> {
  const { order, after, filter } = query;
  const [first, ...rest] = order;
  if (!after || !first || rest.length === 0 || first.name !== 'meritCycleId' || first.expression) {
    return rowsOf(db, source, query, filter, after ? afterCondition(order, after) : null);
  }
  const [group, ...within] = after;
  const sameGroup = afterCondition(rest, within);
  // Every row read is of one cycle (a navigation): the position is within it.
  if (source.fixedColumn === first.column) return rowsOf(db, source, query, filter, sameGroup);
  const column = sql.ref(first.column);
  const rows = await rowsOf(db, source, query, filter, sql`${column} = ${group} and ${sameGroup}`);
  if (rows.length >= query.limit) return rows;
  const later = sql`${column} ${sql.raw(first.descending ? '<' : '>')} ${group}`;
  const more = await rowsOf(
    db,
    source,
    { ...query, limit: query.limit - rows.length },
    filter,
    later,
  );
  return [...rows, ...more];
}

/** The statement of a page (exported for the test of its plan, test/db/odata-plan.test.ts). */
export function pageSql(
  source: Source,
  query: PageQuery,
  filter: Sql | null,
  after: Sql | null,
): Sql {
  const conditions = [filter, after].filter((c): c is Sql => c !== null);
  const where = conditions.length === 0 ? sql`` : sql` and ${sql.join(conditions, sql` and `)}`;
  const orderBy = sql.join(
    query.order.map(
      (key) =>
        sql`${keySql(key)}${sql.raw(key.descending ? ' desc' : '')}${sql.raw(
          key.nullable ? (key.descending ? ' nulls last' : ' nulls first') : '',
        )}`,
    ),
  );
  // The keys of an $orderby other than the set's own: read into the rows, for the token.
  const keys = query.order
    .filter((key) => key.expression)
    .map((key) => sql`, ${key.expression} as ${sql.ref(key.field)}`);
  const offset = query.offset > 0 ? sql` offset ${query.offset}` : sql``;
  // Planned for its values: its best plan depends on them (where the walk is, which cycle).
  return sql`${sql.raw(PLANNED_EACH_TIME)}select ${source.columns}${keys.length > 0 ? sql.join(keys, sql``) : sql``} ${source.rows}${where}
    order by ${orderBy} limit ${query.limit}${offset}`;
}

async function rowsOf(
  db: Db,
  source: Source,
  query: PageQuery,
  filter: Sql | null,
  after: Sql | null,
) {
  return (await sql<Row>`${pageSql(source, query, filter, after)}`.execute(db)).rows;
}

export async function countRows(db: Db, source: Source, filter: Sql | null): Promise<number> {
  const where = filter ? sql` and ${filter}` : sql``;
  const { rows } = await sql<{
    count: number | string;
  }>`select count(*) as count ${source.rows}${where}`.execute(db);
  return Number(rows[0]?.count ?? 0);
}
