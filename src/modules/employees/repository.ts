// Merit cycle employee reads. Rows carry the employee's API JSON (stored-body.ts),
// so a page is read and sent without building an object per employee: its texts are
// joined as they are (by SQLite itself) and go to the socket as bytes.
import { type RawBuilder, sql } from 'kysely';
import { hidesNothing } from '../../columns/hidden.js';
import { hiddenColumnsFor } from '../../columns/repository.js';
import type { Db, Dialect } from '../../db/connect.js';
import { type CopyOut, firstColumnOf, inlined } from '../../db/postgres-copy.js';
import { listPositionOfLine } from '../../export/flat-line.js';
import { isId } from '../../ids.js';
import type { PageRequest } from '../../pagination/page.js';
import { inCycleScope } from '../../tenancy/cycles.js';
import { employeeRows } from '../../tenancy/rows.js';
import type { ReadScope } from '../../tenancy/scope.js';
import { withoutColumns } from './hidden-columns.js';
import type { Employee, EmployeeAfter, EmployeeFilters } from './schema.js';

export interface EmployeePageBytes {
  /** The page's employees: their stored JSON texts joined by commas, in list order, UTF-8. */
  bodies: Buffer;
  /** The sort key of the page's last employee when another page follows, else undefined. */
  after: EmployeeAfter | undefined;
  /** How many employees the page holds (the audit log records it). */
  count: number;
}

// Joins the page's texts in the database. A JSON text never holds a raw control
// character (JSON escapes them), so U+001E between texts marks exactly where each ends:
// the page's last and the one after it are found without parsing the rest.
export const TEXT_SEPARATOR = 0x1e;
const SEPARATOR = String.fromCharCode(TEXT_SEPARATOR);
const COMMA = 0x2c;

/** Stored employee texts in list order, as the database joins them. */
export interface EmployeeTexts {
  /** The employees' stored JSON texts separated by TEXT_SEPARATOR, UTF-8; ours to edit. */
  texts: Buffer;
  /** How many texts `texts` holds. */
  count: number;
}

/**
 * Up to `limit` employees of a cycle after `after` (from the start without one), in list
 * order, in one statement: whether the scope may read the cycle (undefined when not:
 * another organisation's, outside a key's cycle scope, or none) and the stored texts,
 * joined by TEXT_SEPARATOR. Hidden columns are still in them.
 * - SQLite joins the texts itself and hands them over as one BLOB, so that they go from
 *   the database to the socket without becoming a JavaScript string.
 * - PostgreSQL sends them as rows, joined here: its ordered aggregate sorts the rows again
 *   (PostgreSQL 15 does not see that they come sorted), which made a bulk download's
 *   chunk of 1,000 employees 1.7 times as slow to read as the same rows sent as they are.
 *   Given `copyOut` (a bulk download's snapshot), the same statement goes through COPY
 *   (db/postgres-copy.ts): a million texts arrive as PostgreSQL's bytes and are joined as
 *   bytes, never becoming JavaScript strings.
 * Given `flatKey` (a download of the flat CSV), an employee whose stored flat line has that
 * key comes as its line instead (export/flat-line.ts): a text that does not begin with `{`.
 */
export async function readEmployeeTexts(
  db: Db,
  dialect: Dialect,
  scope: ReadScope,
  meritCycleId: string,
  after: EmployeeAfter | undefined,
  limit: number,
  { copyOut, flatKey }: { copyOut?: CopyOut; flatKey?: string } = {},
): Promise<EmployeeTexts | undefined> {
  if (!isId('mc', meritCycleId)) return undefined;
  const text = flatKey
    ? sql`case when e.flat_key = ${flatKey} then e.flat_line else e.body end`
    : sql`e.body`;
  const page = employeesInOrder(scope, meritCycleId, after, limit, text);
  if (dialect === 'postgres' && copyOut) {
    const statement = inlined(postgresTexts(scope, meritCycleId, page).compile(db));
    const bodies = firstColumnOf(await copyOut(`copy (${statement}) to stdout (format binary)`));
    if (bodies.length === 0) return undefined;
    if (bodies[0] === null) return { texts: Buffer.alloc(0), count: 0 };
    return { texts: joinedBytes(bodies as Buffer[], TEXT_SEPARATOR), count: bodies.length };
  }
  if (dialect === 'postgres') {
    const { rows } = await postgresTexts(scope, meritCycleId, page).execute(db);
    if (rows.length === 0) return undefined;
    const bodies = rows[0]?.body === null ? [] : rows.map((row) => row.body);
    return { texts: Buffer.from(bodies.join(SEPARATOR)), count: bodies.length };
  }
  // SQLite aggregates the rows of an ordered subquery in its order (the subquery runs as a
  // co-routine feeding the aggregate); an ORDER BY inside the aggregate would sort the
  // page again, at twice the cost.
  const { rows } = await sql<{ found: number; count: number; bodies: Buffer | null }>`
    select exists(
        select 1 from merit_cycles
        where organization_id = ${scope.organizationId} and id = ${meritCycleId}${inCycleScope(scope, sql`id`)}
      ) as found, count(*) as count, cast(group_concat(body, char(30)) as blob) as bodies
    from (${page}) as page`.execute(db);
  const row = rows[0];
  if (!row?.found) return undefined;
  return { texts: row.bodies ?? Buffer.alloc(0), count: Number(row.count) };
}

/**
 * readEmployeeTexts's statement on PostgreSQL, a row a text: no row when the scope may not
 * read the cycle; one row with a null body when it has no employees (after `after`).
 */
function postgresTexts(scope: ReadScope, meritCycleId: string, page: RawBuilder<unknown>) {
  return sql<{ body: string | null }>`
    select page.body from merit_cycles c left join lateral (${page}) as page on true
    where c.organization_id = ${scope.organizationId} and c.id = ${meritCycleId}${inCycleScope(scope, sql`c.id`)}`;
}

/** Up to `limit` of the cycle's readable employees after `after`, in list order, `text` as body. */
function employeesInOrder(
  scope: ReadScope,
  meritCycleId: string,
  after: EmployeeAfter | undefined,
  limit: number,
  text: RawBuilder<unknown>,
) {
  // A row-value comparison is one range scan of the (…, last_name, first_name, id) key:
  // the employee table's, or a sliced key's members' (tenancy/rows.ts).
  const readable = employeeRows(scope, meritCycleId);
  const order = sql`${readable.lastName}, ${readable.firstName}, ${readable.id}`;
  const from = after ? sql` and (${order}) > (${after[0]}, ${after[1]}, ${after[2]})` : sql``;
  return sql`
    select ${text} as body, e.last_name, e.first_name, e.id ${readable.from}${from}
    order by ${order} limit ${limit}`;
}

/** `parts` one after the other, `separator` between each two. */
function joinedBytes(parts: readonly Buffer[], separator: number): Buffer {
  let length = parts.length - 1;
  for (const part of parts) length += part.length;
  const joined = Buffer.allocUnsafe(length);
  let at = 0;
  for (const [index, part] of parts.entries()) {
    if (index > 0) joined[at++] = separator;
    at += part.copy(joined, at);
  }
  return joined;
}

/**
 * The list position of the last of `texts` (an employee's stored text begins after the last
 * separator): from its JSON, or from its flat line's fields.
 */
export function afterLastText(texts: Buffer): EmployeeAfter {
  const last = texts.toString('utf8', texts.lastIndexOf(TEXT_SEPARATOR) + 1);
  if (!last.startsWith('{')) return listPositionOfLine(last);
  const employee = JSON.parse(last) as Employee;
  return [employee.lastName, employee.firstName, employee.id];
}

/**
 * One page of employees as UTF-8 bytes: the texts of one employee more than the page
 * holds (the extra one only says that another page follows), joined by commas without
 * the scope's hidden columns.
 */
export async function readEmployeePage(
  db: Db,
  dialect: Dialect,
  scope: ReadScope,
  meritCycleId: string,
  page: PageRequest<EmployeeFilters, EmployeeAfter>,
): Promise<EmployeePageBytes | undefined> {
  const found = await readEmployeeTexts(
    db,
    dialect,
    scope,
    meritCycleId,
    page.after,
    page.limit + 1,
  );
  if (!found) return undefined;
  const hidden = await hiddenColumnsFor(db, scope, meritCycleId);
  const joinedPage = (texts: Buffer) =>
    hidesNothing(hidden) ? commaSeparated(texts) : withoutColumns(texts, TEXT_SEPARATOR, hidden);
  if (found.count <= page.limit) {
    return { bodies: joinedPage(found.texts), after: undefined, count: found.count };
  }
  const bodies = found.texts.subarray(0, found.texts.lastIndexOf(TEXT_SEPARATOR));
  // Before the texts are joined by commas in place.
  const after = afterLastText(bodies);
  return { bodies: joinedPage(bodies), after, count: page.limit };
}

function commaSeparated(bytes: Buffer): Buffer {
  for (
    let at = bytes.indexOf(TEXT_SEPARATOR);
    at !== -1;
    at = bytes.indexOf(TEXT_SEPARATOR, at + 1)
  ) {
    bytes[at] = COMMA;
  }
  return bytes;
}
