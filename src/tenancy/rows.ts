// The employees a key may read (its ReadScope's row slice): the one statement of how every
// read path (REST pages, deltas, bulk downloads, the OData feed) reaches them. A key
// without a slice reads the employee table; a sliced key reads its slice's precomputed
// members (migration 0018), in the list's order, with their employees' texts — an index
// range scan of the members, never the slice's conditions per request.
import { type RawBuilder, sql } from 'kysely';
import type { ReadScope } from './scope.js';

type Sql = RawBuilder<unknown>;

/** Where a read finds a cycle's employees (`e`) and the columns of the list's order. */
export interface EmployeeRows {
  /** `from … where …` of the cycle's readable employees, the employee table as `e`. */
  from: Sql;
  /** The list order's columns to range-scan and sort by: last name, first name, id. */
  lastName: Sql;
  firstName: Sql;
  id: Sql;
}

/** The readable employees of the organisation's cycle `meritCycleId`, by the scope's slice. */
export function employeeRows(scope: ReadScope, meritCycleId: string): EmployeeRows {
  const { organizationId, rowSlice } = scope;
  if (rowSlice === null) {
    return {
      from: sql`from merit_cycle_employees e
        where e.organization_id = ${organizationId} and e.merit_cycle_id = ${meritCycleId}`,
      lastName: sql`e.last_name`,
      firstName: sql`e.first_name`,
      id: sql`e.id`,
    };
  }
  // The members carry their employees' texts in the same columns (migration 0018): the
  // table itself is read as `e`. The slice is the organisation's, checked once a query.
  return {
    from: sql`from row_slice_members e
      where e.slice_id = ${rowSlice.id} and e.merit_cycle_id = ${meritCycleId}
        and ${sliceOfOrganization(rowSlice.id, organizationId)}`,
    lastName: sql`e.last_name`,
    firstName: sql`e.first_name`,
    id: sql`e.id`,
  };
}

/** That the slice is the organisation's: the tenant condition of a sliced read. */
export const sliceOfOrganization = (sliceId: string, organizationId: string): Sql =>
  sql`exists (select 1 from row_slices where id = ${sliceId} and organization_id = ${organizationId})`;

/**
 * The change order of a cycle's readable employees, for a delta: `from` a table-like
 * subquery with `change_seq`, `id` and `body`, and of its removals with `change_seq` and
 * `id`. A sliced key's changes are its slice's: members stamped when their employee
 * changed or entered the slice, and departures for those that left it.
 */
export function employeeChangeRows(
  scope: ReadScope,
  meritCycleId: string,
  body: Sql,
): { live: Sql; removed: Sql } | undefined {
  const { rowSlice } = scope;
  if (rowSlice === null) return undefined;
  return {
    live: sql`(select change_seq, id, ${body} as body from row_slice_members
       where slice_id = ${rowSlice.id} and merit_cycle_id = ${meritCycleId}
         and ${sliceOfOrganization(rowSlice.id, scope.organizationId)})`,
    removed: sql`(select change_seq, employee_id as id from row_slice_departures
       where slice_id = ${rowSlice.id} and merit_cycle_id = ${meritCycleId})`,
  };
}
