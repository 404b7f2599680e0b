// An organisation's merit cycles as an operator sees them (`compplan cycles list`): each
// with its id (what `compplan import FILE.csv --cycle ID` needs), currency and how many
// employees it has. Not a read of the API: no key and no scope, the command line's own
// access to the database; in the API's list order (newest createdDate first, ties by id).
import type { ExpressionBuilder } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Database, MeritCyclesTable } from '../../db/types.js';
import { toIso } from '../../db/values.js';
import type { MeritCycleStatus } from './schema.js';

export interface CycleOverview {
  id: string;
  name: string;
  status: MeritCycleStatus;
  startDate: string;
  currency: string;
  employees: number;
}

/** How many employees the cycle `c` has: a subquery of a statement over `merit_cycles as c`. */
export function employeeCountOf(eb: ExpressionBuilder<Database & { c: MeritCyclesTable }, 'c'>) {
  return eb
    .selectFrom('merit_cycle_employees as e')
    .select((inner) => inner.fn.countAll<number | string>().as('n'))
    .whereRef('e.merit_cycle_id', '=', 'c.id')
    .as('employees');
}

export async function listOrganizationCycles(
  db: Db,
  organizationId: string,
): Promise<CycleOverview[]> {
  const rows = await db
    .selectFrom('merit_cycles as c')
    .select(['c.id', 'c.name', 'c.status', 'c.start_date', 'c.currency'])
    .select(employeeCountOf)
    .where('c.organization_id', '=', organizationId)
    .orderBy('c.created_date', 'desc')
    .orderBy('c.id', 'asc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    status: row.status as MeritCycleStatus,
    startDate: toIso(row.start_date),
    currency: row.currency,
    employees: Number(row.employees),
  }));
}
