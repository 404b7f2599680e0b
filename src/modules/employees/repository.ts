// Merit cycle employee reads. Rows carry the employee's API JSON (written at import),
// so a page is read and sent without building an object per employee.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { PageRequest } from '../../pagination/page.js';
import type { Employee, EmployeeAfter, EmployeeFilters } from './schema.js';

export interface EmployeePageRow {
  id: string;
  last_name: string;
  first_name: string;
  /** The employee as JSON text, exactly as the API serves it. */
  body: string;
}

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

export function afterEmployee(row: EmployeePageRow): EmployeeAfter {
  return [row.last_name, row.first_name, row.id];
}

export async function listEmployeeRows(
  db: Db,
  organizationId: string,
  meritCycleId: string,
  page: PageRequest<EmployeeFilters, EmployeeAfter>,
): Promise<EmployeePageRow[]> {
  let query = db
    .selectFrom('merit_cycle_employees')
    .select(['id', 'last_name', 'first_name', 'body'])
    .where('organization_id', '=', organizationId)
    .where('merit_cycle_id', '=', meritCycleId);
  if (page.after) {
    const [lastName, firstName, id] = page.after;
    // A row-value comparison is one range scan of the (…, last_name, first_name, id) index.
    query = query.where(
      sql<boolean>`(last_name, first_name, id) > (${lastName}, ${firstName}, ${id})`,
    );
  }
  return query
    .orderBy('last_name')
    .orderBy('first_name')
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
}
