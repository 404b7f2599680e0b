// Step 2 of an import (load.ts): the checks across records (docs/import-format.md, "All or
// nothing") — an employee's id or email given twice in a cycle, for each cycle whose
// records are all valid; a cycle's id or name given twice, and an employee id in two
// cycles, when every record is. Employees are queries over the staging table that return
// the offending rows' positions, so problems keep their paths and lines.
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import type { Path, ProblemList } from './errors.js';
import type { IntakeOutcome } from './intake.js';
import { STAGING } from './staging.js';

type Tx = Kysely<Database>;

export async function checkRepeats(
  trx: Tx,
  intake: IntakeOutcome,
  problems: ProblemList,
): Promise<void> {
  const clean = intake.cycles.flatMap((state, index) => (state.faulty ? [] : [index]));
  if (clean.some((index) => (intake.cycles[index]?.employees ?? 0) > 1)) {
    for (const [column, field, message] of [
      ['id', 'id', 'repeats the id of {other}'],
      ['email_key', 'email', 'repeats the email of {other} (emails compare case-insensitively)'],
    ] as const) {
      await staged(trx, problems, {
        where: `${column} is not null and cycle_index in (${clean.join(', ')})`,
        group: `cycle_index, ${column}`,
        repeated: 'count(*) > 1',
        wrong: 'employee_index <> first_index',
        field,
        message,
      });
    }
  }
  if (intake.recordProblems > 0) return;

  // Ids and names of cycles: in memory (cycles are few).
  for (const key of ['id', 'name'] as const) {
    const first = new Map<string, number>();
    for (const [index, { cycle, line }] of intake.cycles.entries()) {
      const value = cycle?.[key];
      if (value === undefined) continue;
      const earlier = first.get(value);
      if (earlier === undefined) first.set(value, index);
      else {
        problems.add({
          path: ['meritCycles', index, key],
          line,
          message: `repeats the ${key} of {other}`,
          other: ['meritCycles', earlier],
        });
      }
    }
  }
  if (intake.cycles.filter((state) => state.employees > 0).length > 1) {
    await staged(trx, problems, {
      where: 'id is not null',
      group: 'id',
      repeated: 'min(cycle_index) <> max(cycle_index)',
      wrong: 'first_cycle <> cycle_index',
      field: 'id',
      message: 'repeats the id of {other}: an employee id belongs to one merit cycle',
    });
  }
}

/**
 * Staged employees that repeat an earlier one (in file order) within `group`: one more
 * than the problems keep (more than a report shows), and how many there are. A grouping
 * first asks whether there is any at all: it costs a fraction of the window query, and
 * almost every import has none.
 */
async function staged(
  trx: Tx,
  problems: ProblemList,
  check: Record<'where' | 'group' | 'repeated' | 'wrong' | 'field' | 'message', string>,
): Promise<void> {
  const run = (text: string) =>
    trx.executeQuery<Record<string, number | null>>(CompiledQuery.raw(text));
  const any = await run(
    `select 1 from ${STAGING} where ${check.where} group by ${check.group} having ${check.repeated} limit 1`,
  );
  if (any.rows.length === 0) return;
  const { rows } = await run(
    `select cycle_index, employee_index, line, first_cycle, first_index,
            count(*) over () as total from (
       select cycle_index, employee_index, line,
              first_value(cycle_index) over same as first_cycle,
              first_value(employee_index) over same as first_index
         from ${STAGING} where ${check.where}
       window same as (partition by ${check.group} order by cycle_index, employee_index)
     ) repeated
     where ${check.wrong} order by cycle_index, employee_index limit ${problems.keepAtMost + 1}`,
  );
  const employee = (cycle: unknown, index: unknown): Path => [
    'meritCycles',
    Number(cycle),
    'employees',
    Number(index),
  ];
  for (const row of rows) {
    problems.add({
      path: [...employee(row.cycle_index, row.employee_index), check.field],
      line: row.line ?? undefined,
      message: check.message,
      other: employee(row.first_cycle, row.first_index),
    });
  }
  problems.total += Math.max(0, Number(rows[0]?.total ?? 0) - rows.length);
}
