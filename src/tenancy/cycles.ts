// The merit cycles a key may read (its ReadScope): the tenant and cycle-scope conditions
// every read path joins, written once. A cycle of another organisation, or outside the
// scope, is simply not found — by the same statement, in the database, so that it takes
// the time of a cycle that does not exist.
import { type ExpressionBuilder, type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database, MeritCycleRow } from '../db/types.js';
import { isId } from '../ids.js';
import type { ReadScope } from './scope.js';

/**
 * The condition that a merit cycle id (`column`) is in the scope's cycle scope; undefined
 * for a key that may read every cycle of its organisation. One statement of the rule for
 * the query builder's reads (readableCycles) and the raw compound statements of employee
 * pages and deltas (inCycleScope).
 */
function cycleScopeCondition(
  scope: ReadScope,
  column: RawBuilder<unknown>,
): RawBuilder<boolean> | undefined {
  const { cycleIds } = scope;
  if (cycleIds === null) return undefined;
  // A scope is never empty (the key's checks); should one be, it reads nothing.
  if (cycleIds.length === 0) return sql<boolean>`1 = 0`;
  return sql<boolean>`${column} in (${sql.join(cycleIds)})`;
}

/** The merit cycles the scope may read: its organisation's, only those of a cycle scope. */
export function readableCycles(scope: ReadScope) {
  return (eb: ExpressionBuilder<Database, 'merit_cycles'>) => {
    const ofOrganization = eb('merit_cycles.organization_id', '=', scope.organizationId);
    const inScope = cycleScopeCondition(scope, sql.ref('merit_cycles.id'));
    return inScope ? eb.and([ofOrganization, inScope]) : ofOrganization;
  };
}

/** `and <the cycle is in the scope's cycle scope>` as raw SQL, or nothing. */
export function inCycleScope(scope: ReadScope, column: RawBuilder<unknown>): RawBuilder<unknown> {
  const inScope = cycleScopeCondition(scope, column);
  return inScope ? sql` and ${inScope}` : sql``;
}

export async function findMeritCycleRow(
  db: Db,
  scope: ReadScope,
  id: string,
): Promise<MeritCycleRow | undefined> {
  if (!isId('mc', id)) return undefined;
  return db
    .selectFrom('merit_cycles')
    .selectAll()
    .where(readableCycles(scope))
    .where('id', '=', id)
    .executeTakeFirst();
}
