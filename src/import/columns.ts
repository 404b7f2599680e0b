// Step 3 of an import (merge.ts), for each merit cycle that lists employees: the cycle's
// column schema kept up to date (src/columns/). When the file holds every employee the
// cycle keeps (a new cycle, --prune, or every stored employee matched), the schema is the
// file's; otherwise the employees the file does not list keep their columns, and the
// schema is the stored one and the file's together — in which a key has one name and one
// type, so a file that gives a kept column another is refused.
import { type Kysely, sql } from 'kysely';
import { readColumnSchema, saveColumnSchema } from '../columns/repository.js';
import { describeColumns, mergeColumnSchemas } from '../columns/schema.js';
import type { Database } from '../db/types.js';
import { ImportError, type Path } from './errors.js';
import type { CycleState } from './intake.js';

const KEPT =
  'of employees of this merit cycle that the file does not list; a column has one name and one type within a merit cycle (list every employee of the cycle, or import with --prune, to change it)';

export async function keepColumnSchema(
  trx: Kysely<Database>,
  organizationId: string,
  meritCycleId: string,
  state: CycleState,
  at: Path,
  wholeCycle: boolean,
): Promise<void> {
  const given = describeColumns(state.columns);
  if (wholeCycle || (await employeesOf(trx, meritCycleId)) === state.employees) {
    await saveColumnSchema(trx, organizationId, meritCycleId, given);
    return;
  }
  const stored = await readColumnSchema(trx, meritCycleId);
  const { columns, conflicts } = mergeColumnSchemas(stored, given);
  const [conflict] = conflicts;
  if (conflict) {
    const seen = state.columns.get(conflict.key);
    const { field } = conflict;
    const part = typeof field === 'object' ? seen?.parts?.get(field.part) : undefined;
    const employee = part?.employee ?? seen?.employee ?? 0;
    const below = typeof field === 'object' ? ['value', field.part] : [field];
    const what =
      typeof field === 'object'
        ? `is of another kind than this part (${conflict.stored})`
        : field === 'type'
          ? `is ${JSON.stringify(seen?.type)}, but the column is ${JSON.stringify(conflict.stored)}`
          : `is ${JSON.stringify(seen?.name)}, but the column is named ${JSON.stringify(conflict.stored)}`;
    throw new ImportError([
      {
        path: [...at, 'employees', employee, 'columns', conflict.key, ...below],
        message: `${what} ${KEPT}`,
      },
    ]);
  }
  await saveColumnSchema(trx, organizationId, meritCycleId, columns);
}

async function employeesOf(trx: Kysely<Database>, meritCycleId: string): Promise<number> {
  const { rows } = await sql<{ employees: number | string }>`
    select count(*) as employees from merit_cycle_employees
     where merit_cycle_id = ${meritCycleId}`.execute(trx);
  return Number(rows[0]?.employees ?? 0);
}
