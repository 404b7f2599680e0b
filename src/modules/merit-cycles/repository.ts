// Merit cycle reads. Every function takes what the key may read (ReadScope): no query can
// forget the tenant or the key's cycle scope, and a cycle of another organisation, or
// outside the scope, is simply not found — by the same statement, in the database, so
// that it takes the time of a cycle that does not exist.
import type { Db } from '../../db/connect.js';
import type { MeritCycleRow } from '../../db/types.js';
import { toIso } from '../../db/values.js';
import type { PageRequest } from '../../pagination/page.js';
import { readableCycles } from '../../tenancy/cycles.js';
import type { ReadScope } from '../../tenancy/scope.js';
import type { MeritCycle, MeritCycleAfter, MeritCycleFilters, MeritCycleStatus } from './schema.js';

/** The columns a merit cycle's API form is made of. */
const MERIT_CYCLE_COLUMNS = [
  'id',
  'name',
  'start_date',
  'end_date',
  'created_date',
  'status',
] as const satisfies readonly (keyof MeritCycleRow)[];

export function toMeritCycle(
  row: Pick<MeritCycleRow, (typeof MERIT_CYCLE_COLUMNS)[number]>,
): MeritCycle {
  return {
    id: row.id,
    name: row.name,
    startDate: toIso(row.start_date),
    endDate: toIso(row.end_date),
    createdDate: toIso(row.created_date),
    status: row.status as MeritCycleStatus,
  };
}

export function afterMeritCycle(cycle: MeritCycle): MeritCycleAfter {
  return { createdDate: cycle.createdDate, id: cycle.id };
}

const DAY_MS = 86_400_000;
const startOf = (date: string) => `${date}T00:00:00.000Z`;
/** Midnight UTC after `date`, or undefined past the last date a filter can name. */
function startOfNext(date: string): string | undefined {
  const next = new Date(Date.parse(startOf(date)) + DAY_MS);
  return next.getUTCFullYear() > 9999 ? undefined : next.toISOString();
}

export async function listMeritCycles(
  db: Db,
  scope: ReadScope,
  page: PageRequest<MeritCycleFilters, MeritCycleAfter>,
): Promise<MeritCycle[]> {
  const { filters, after, limit } = page;
  // Not the exchange rates: a list does not show them.
  let query = db
    .selectFrom('merit_cycles')
    .select(MERIT_CYCLE_COLUMNS)
    .where(readableCycles(scope));
  if (filters.status) query = query.where('status', '=', filters.status);

  // A filter on the UTC calendar date of startDate is a half-open range of instants
  // (gt 2025-01-01 ⇔ start_date ≥ 2025-01-02T00:00Z), so the stored value is compared
  // as it is, on both databases, without a date function around the column.
  if (filters.gte) query = query.where('start_date', '>=', startOf(filters.gte));
  if (filters.gt) {
    const from = startOfNext(filters.gt);
    query = from ? query.where('start_date', '>=', from) : query.where((eb) => eb.lit(false));
  }
  if (filters.lt) query = query.where('start_date', '<', startOf(filters.lt));
  if (filters.lte) {
    const until = startOfNext(filters.lte);
    if (until) query = query.where('start_date', '<', until);
  }

  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_date', '<', after.createdDate),
        eb.and([eb('created_date', '=', after.createdDate), eb('id', '>', after.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_date', 'desc')
    .orderBy('id', 'asc')
    .limit(limit + 1)
    .execute();
  return rows.map(toMeritCycle);
}

/** The cycle with this id that the scope may read; undefined for any other id, of any shape. */
export function toExchangeRates(row: MeritCycleRow): {
  base: string;
  rates: Record<string, number>;
} {
  return { base: row.currency, rates: JSON.parse(row.exchange_rates) as Record<string, number> };
}
