// Each merit cycle's employee count and last import (Settings → Data, docs/web-app.md),
// written by every import in its own transaction (load.ts), after the merge. The count is
// kept, not counted: an import changes it by what it created and removed (nothing else
// writes a cycle's employees; removing the cycle removes its row), so that the page reads
// one row a cycle however many employees it has.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/types.js';
import { toIso } from '../db/values.js';
import type { CycleChange } from '../webhooks/outbox.js';

type Tx = Kysely<Database>;

/** Who imports: a web application user's email, or `cli` for `compplan import`. */
export const CLI_IMPORTER = 'cli';

/** What an import did to one cycle; `employees` when the file listed the cycle's employees. */
export interface CycleImport extends Omit<CycleChange, 'employees'> {
  employees?: { created: number; updated: number; unchanged: number; removed: number };
}

export async function recordCycleImports(
  trx: Tx,
  cycles: readonly CycleImport[],
  importedBy: string,
  at: string,
): Promise<void> {
  for (const cycle of cycles) {
    const counts = cycle.employees;
    const delta = counts ? counts.created - counts.removed : 0;
    const employees = counts ? JSON.stringify(counts) : null;
    // A created cycle starts from nothing (an older row of its id, if any, is gone).
    const count =
      cycle.cycle === 'created'
        ? sql`excluded.employee_count`
        : sql`merit_cycle_imports.employee_count + ${delta}`;
    await sql`insert into merit_cycle_imports
        (merit_cycle_id, employee_count, imported_at, imported_by, employees)
      values (${cycle.meritCycleId}, ${delta}, ${at}, ${importedBy}, ${employees})
      on conflict (merit_cycle_id) do update set employee_count = ${count},
        imported_at = excluded.imported_at, imported_by = excluded.imported_by,
        employees = excluded.employees`.execute(trx);
  }
}

/** A merit cycle as Settings → Data lists it. */
export interface CycleOverview {
  id: string;
  name: string;
  status: string;
  startDate: string;
  endDate: string;
  employeeCount: number;
  /** The last import; null for a cycle last imported before these were recorded. */
  lastImport: {
    at: string;
    by: string;
    employees: { created: number; updated: number; unchanged: number; removed: number } | null;
  } | null;
}

/** The organisation's merit cycles, newest first: one row each, however many employees. */
export async function listCycleOverviews(
  db: Kysely<Database>,
  organizationId: string,
): Promise<CycleOverview[]> {
  const rows = await db
    .selectFrom('merit_cycles as c')
    .leftJoin('merit_cycle_imports as i', 'i.merit_cycle_id', 'c.id')
    .select([
      'c.id',
      'c.name',
      'c.status',
      'c.start_date',
      'c.end_date',
      'i.employee_count',
      'i.imported_at',
      'i.imported_by',
      'i.employees',
    ])
    .where('c.organization_id', '=', organizationId)
    .orderBy('c.start_date', 'desc')
    .orderBy('c.name')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    status: row.status,
    startDate: toIso(row.start_date),
    endDate: toIso(row.end_date),
    employeeCount: Number(row.employee_count ?? 0),
    lastImport:
      row.imported_at === null
        ? null
        : {
            at: toIso(row.imported_at),
            by: row.imported_by ?? CLI_IMPORTER,
            employees: row.employees === null ? null : JSON.parse(row.employees),
          },
  }));
}
