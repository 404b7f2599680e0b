// Merit cycle employee reads. Rows carry the employee's API JSON (written at import),
// so a page is read and sent without building an object per employee: the database joins
// the page's texts, and one string crosses into JavaScript.
import { sql } from 'kysely';
import type { Db, Dialect } from '../../db/connect.js';
import type { PageRequest } from '../../pagination/page.js';
import type { Employee, EmployeeAfter, EmployeeFilters } from './schema.js';

/** The one place an employee becomes its API form; the import stores its JSON text. */
export function toEmployee(fields: Employee): Employee {
  return {
    id: fields.id,
    email: fields.email,
    firstName: fields.firstName,
    lastName: fields.lastName,
    preferredName: fields.preferredName,
    currencyCode: { code: fields.currencyCode.code, value: fields.currencyCode.value },
    eligibilityStatus: fields.eligibilityStatus,
    columns: fields.columns,
  };
}

export interface EmployeePageText {
  /** The page's employees: their stored JSON texts joined by commas, in list order. */
  bodies: string;
  /** The sort key of the page's last employee when another page follows, else undefined. */
  after: EmployeeAfter | undefined;
}

/**
 * One page of employees as text. The database joins the stored JSON texts of the page in
 * list order (string_agg), so one value crosses into JavaScript instead of a row object
 * per employee: on a page of 100 that conversion was most of the request's time
 * (docs/benchmarks.md). When the page is full, a second read of two sort keys says where
 * it ends and whether another page follows.
 */
export async function readEmployeePage(
  db: Db,
  dialect: Dialect,
  organizationId: string,
  meritCycleId: string,
  page: PageRequest<EmployeeFilters, EmployeeAfter>,
): Promise<EmployeePageText> {
  // A row-value comparison is one range scan of the (…, last_name, first_name, id) index.
  const where = sql`organization_id = ${organizationId} and merit_cycle_id = ${meritCycleId}${
    page.after
      ? sql` and (last_name, first_name, id) > (${page.after[0]}, ${page.after[1]}, ${page.after[2]})`
      : sql``
  }`;
  // SQLite aggregates the rows of an ordered subquery in its order (the subquery runs as a
  // co-routine feeding the aggregate); an ORDER BY inside the aggregate would sort the
  // page again, at twice the cost. PostgreSQL promises the order only with one, so it
  // gets one.
  const joined =
    dialect === 'postgres'
      ? sql`string_agg(body, ',' order by last_name, first_name, id)`
      : sql`group_concat(body, ',')`;
  const { rows } = await sql<{ bodies: string | null; count: number | string }>`
    select ${joined} as bodies, count(*) as count from (
      select body, last_name, first_name, id from merit_cycle_employees where ${where}
      order by last_name, first_name, id limit ${page.limit}
    ) as page`.execute(db);
  const bodies = rows[0]?.bodies ?? '';
  if (Number(rows[0]?.count ?? 0) < page.limit) return { bodies, after: undefined };
  // The page's last row and the one after it, if any.
  const { rows: ends } = await sql<{ last_name: string; first_name: string; id: string }>`
    select last_name, first_name, id from merit_cycle_employees where ${where}
    order by last_name, first_name, id limit 2 offset ${page.limit - 1}`.execute(db);
  const last = ends[0];
  return {
    bodies,
    after: ends.length === 2 && last ? [last.last_name, last.first_name, last.id] : undefined,
  };
}
