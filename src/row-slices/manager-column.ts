// The organisation's manager column (`compplan orgs set SLUG --manager-column KEY`): the
// text column (or composite text part) that holds each employee's manager's email, which
// `--reports-to` slices follow. Each employee's manager email is kept beside it in lower
// case (`manager_key`, indexed by cycle), written by the import for the employees it
// writes and for every employee when the column is named, so that a reporting line is
// walked by index lookups.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../db/connect.js';
import type { Database } from '../db/types.js';
import { type TextColumn, textColumnOf, textValueSql } from './columns.js';

type Tx = Kysely<Database>;

/** The stored manager column as a TextColumn; null when the organisation has none. */
export const managerColumnOf = (stored: string | null): TextColumn | null =>
  stored === null ? null : textColumnOf(stored);

/**
 * Writes the manager emails of the organisation's employees — of one cycle's employees
 * stamped from `fromStamp` on (what an import just wrote) when given, else of all.
 */
export async function writeManagerKeys(
  trx: Tx,
  dialect: Dialect,
  organizationId: string,
  column: TextColumn | null,
  where: { meritCycleId: string; fromStamp: number } | null,
): Promise<void> {
  const value = column === null ? sql`null` : sql`lower(${textValueSql(dialect, column)})`;
  const which =
    where === null
      ? sql``
      : sql` and merit_cycle_id = ${where.meritCycleId} and change_seq >= ${where.fromStamp}`;
  // `e`: the alias textValueSql reads the stored JSON through.
  await sql`update merit_cycle_employees as e set manager_key = ${value}
    where e.organization_id = ${organizationId}${which}`.execute(trx);
}

/** The most loops an import's summary names: the first is enough to find the others. */
const LOOPS_SHOWN = 5;

/**
 * The reporting loops of a cycle (A reports to B, B to A): each as the emails around it,
 * the smallest first. Only managers can be in a loop, so only they are read.
 */
export async function reportingLoops(trx: Tx, meritCycleId: string): Promise<string[][]> {
  const { rows } = await sql<{ email_key: string; manager_key: string }>`
    select e.email_key, e.manager_key from merit_cycle_employees e
     where e.merit_cycle_id = ${meritCycleId} and e.manager_key is not null
       and exists (select 1 from merit_cycle_employees r
                    where r.merit_cycle_id = ${meritCycleId} and r.manager_key = e.email_key)`.execute(
    trx,
  );
  const managerOf = new Map(rows.map((row) => [row.email_key, row.manager_key]));
  // Each manager has one manager: following them from any manager ends at the top or in a
  // loop; `done` marks managers already walked from, so each is walked once.
  const done = new Set<string>();
  const loops: string[][] = [];
  for (const start of managerOf.keys()) {
    if (done.has(start)) continue;
    const path: string[] = [];
    const onPath = new Map<string, number>();
    let at: string | undefined = start;
    while (at !== undefined && !done.has(at) && !onPath.has(at)) {
      onPath.set(at, path.length);
      path.push(at);
      at = managerOf.get(at);
    }
    if (at !== undefined && onPath.has(at) && loops.length < LOOPS_SHOWN) {
      const loop = path.slice(onPath.get(at));
      const first = loop.indexOf([...loop].sort()[0] as string);
      loops.push([...loop.slice(first), ...loop.slice(0, first)]);
    }
    for (const email of path) done.add(email);
  }
  return loops;
}
