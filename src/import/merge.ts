// Step 3 of an import (load.ts), once there is no problem at all: the data set merged into
// what is stored. The organisation and each merit cycle are matched and written one by
// one (they are few); each cycle's employees with set-based SQL over the staging table
// (mergeEmployees). Every row written gets its change stamp (src/changes/change.ts), and
// the webhook events are recorded in the same transaction (src/webhooks/outbox.ts).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { type Actor, CLI_ACTOR } from '../audit/entry.js';
import { recordAction } from '../audit/repository.js';
import { OrganizationChange } from '../changes/change.js';
import {
  forgetRemovedCycle,
  forgetRemovedEmployees,
  rememberPrunedEmployees,
} from '../changes/removals.js';
import { DEFAULT_CHANGE_RETENTION_DAYS } from '../config.js';
import type { Dialect } from '../db/connect.js';
import type { Database, MeritCycleRow } from '../db/types.js';
import { toIso } from '../db/values.js';
import { newId } from '../ids.js';
import { managerColumnOf, reportingLoops, writeManagerKeys } from '../row-slices/manager-column.js';
import { refreshSlicesOfCycle } from '../row-slices/repository.js';
import { findOrganizationBySlug, saveOrganization } from '../tenancy/organizations.js';
import { type CycleChange, recordImportEvents } from '../webhooks/outbox.js';
import { keepColumnSchema } from './columns.js';
import { ImportError, type Path } from './errors.js';
import type { CycleState } from './intake.js';
import type { ImportMeritCycleRecord, ImportRoot } from './schema.js';
import { MATCHES, STAGING } from './staging.js';
import { storedBodySql } from './stored-body.js';

type Tx = Kysely<Database>;

type Outcome = 'created' | 'updated' | 'unchanged';
type EmployeeCounts = Record<Outcome | 'removed', number>;
type OrganizationField = 'name' | 'apiKeysEnabled';

export interface ImportSummary {
  /** `changed`: the fields of a stored organisation the import changed (none when created). */
  organization: { slug: string; created: boolean; changed: OrganizationField[] };
  meritCycles: Record<Outcome, number>;
  employees: EmployeeCounts;
  /**
   * Reporting loops found through the organisation's manager column (A reports to B, B to
   * A), by cycle, each as the emails around it; absent when there is none. Slices that
   * follow reporting lines read them without looping (src/row-slices/).
   */
  reportingLoops?: { meritCycleId: string; loops: string[][] }[];
}

export interface ImportOptions {
  /** Also remove the employees of an imported cycle that the data set no longer lists. */
  prune?: boolean;
  /** CHANGE_RETENTION_DAYS: the import purges the organisation's older tombstones. */
  changeRetentionDays?: number;
  /** The import's clock (tests move it instead of waiting); the real time by default. */
  now?: Date;
  /** Who imports, for the audit log: the command line when not given. */
  actor?: Actor;
}

/** The summary, and what the import did to each cycle (in the file's order). */
export interface MergeOutcome {
  summary: ImportSummary;
  cycles: CycleChange[];
}

/** A problem the stored data finds with the file: the only one reported. */
const refused = (path: Path, message: string) => new ImportError([{ path, message }]);

export async function merge(
  trx: Tx,
  dialect: Dialect,
  root: ImportRoot,
  cycles: readonly CycleState[],
  options: ImportOptions,
  now: string,
): Promise<MergeOutcome> {
  const {
    id: organizationId,
    managerColumn,
    ...organization
  } = await upsertOrganization(trx, root.organization, now);
  // After the import lock: the organisation's changes are stamped in commit order.
  const change = await OrganizationChange.begin(trx, dialect, organizationId, now);
  const summary: ImportSummary = {
    organization: { slug: root.organization.slug, ...organization },
    meritCycles: { created: 0, updated: 0, unchanged: 0 },
    employees: { created: 0, updated: 0, unchanged: 0, removed: 0 },
  };
  const changes: CycleChange[] = [];
  for (const [index, state] of cycles.entries()) {
    const at: Path = ['meritCycles', index];
    const cycle = state.cycle as ImportMeritCycleRecord;
    const { id, outcome } = await upsertMeritCycle(trx, change, cycle, at);
    summary.meritCycles[outcome]++;
    const cycleChange: CycleChange = { meritCycleId: id, cycle: outcome };
    changes.push(cycleChange);
    if (!state.listsEmployees) continue;
    const firstStamp = change.nextStamp;
    const counts = await mergeEmployees(trx, change, {
      meritCycleId: id,
      at,
      count: state.employees,
      isNew: outcome === 'created',
      prune: options.prune === true,
    });
    const wholeCycle = outcome === 'created' || options.prune === true;
    await keepColumnSchema(trx, organizationId, id, state, at, wholeCycle);
    const loops = await keepReportingLines(trx, change, managerColumn, {
      meritCycleId: id,
      fromStamp: firstStamp,
    });
    if (loops.length > 0) {
      summary.reportingLoops = [...(summary.reportingLoops ?? []), { meritCycleId: id, loops }];
    }
    for (const key of ['created', 'updated', 'unchanged', 'removed'] as const) {
      summary.employees[key] += counts[key];
    }
    cycleChange.employees = counts;
  }
  await change.finish(trx, options.changeRetentionDays ?? DEFAULT_CHANGE_RETENTION_DAYS);
  // Webhook events, in this transaction: none for an import that fails (src/webhooks).
  await recordImportEvents(trx, organizationId, changes, now);
  // The audit log's entry, in this transaction too: counts only, never employee data.
  await recordAction(trx, {
    organizationId,
    action: 'import',
    actor: options.actor ?? CLI_ACTOR,
    details: {
      organizationCreated: organization.created,
      meritCycles: summary.meritCycles,
      employees: summary.employees,
      prune: options.prune === true,
    },
    at: new Date(now),
  });
  return { summary, cycles: changes };
}

/**
 * What the cycle's new employees mean for reporting lines and slices: the manager emails
 * of the employees the import wrote (from stamp `fromStamp` on), the cycle's reporting
 * loops, and every slice's members there (src/row-slices/).
 */
async function keepReportingLines(
  trx: Tx,
  change: OrganizationChange,
  managerColumn: string | null,
  written: { meritCycleId: string; fromStamp: number },
): Promise<string[][]> {
  let loops: string[][] = [];
  if (managerColumn !== null) {
    const column = managerColumnOf(managerColumn);
    await writeManagerKeys(trx, change.dialect, change.organizationId, column, written);
    loops = await reportingLoops(trx, written.meritCycleId);
  }
  await refreshSlicesOfCycle(trx, change, written.meritCycleId);
  return loops;
}

async function upsertOrganization(
  trx: Tx,
  input: ImportRoot['organization'],
  now: string,
): Promise<
  Omit<ImportSummary['organization'], 'slug'> & { id: string; managerColumn: string | null }
> {
  const existing = await findOrganizationBySlug(trx, input.slug);
  // An absent apiKeysEnabled leaves the organisation's setting as it is.
  const organization = {
    ...(existing ?? { id: newId('org'), createdAt: now }),
    slug: input.slug,
    name: input.name,
    apiKeysEnabled: input.apiKeysEnabled ?? existing?.apiKeysEnabled ?? false,
  };
  const changed = (['name', 'apiKeysEnabled'] as const).filter(
    (field) => existing && existing[field] !== organization[field],
  );
  if (!existing || changed.length > 0) await saveOrganization(trx, organization, !existing);
  return {
    id: organization.id,
    created: !existing,
    changed,
    managerColumn: existing?.managerColumn ?? null,
  };
}

/** A cycle matched by id where given, else by organisation and name; written if changed. */
async function upsertMeritCycle(
  trx: Tx,
  change: OrganizationChange,
  cycle: ImportMeritCycleRecord,
  at: Path,
): Promise<{ id: string; outcome: Outcome }> {
  const { organizationId } = change;
  // One query finds both the cycle (by id, or by name) and any other of the name.
  const named = (row: MeritCycleRow) =>
    row.organization_id === organizationId && row.name === cycle.name;
  const found = await trx
    .selectFrom('merit_cycles')
    .selectAll()
    .where((where) =>
      where.or([
        where.and({ organization_id: organizationId, name: cycle.name }),
        ...(cycle.id ? [where('id', '=', cycle.id)] : []),
      ]),
    )
    .execute();
  const existing = found.find((row) => (cycle.id ? row.id === cycle.id : named(row)));
  if (existing && existing.organization_id !== organizationId) {
    throw refused([...at, 'id'], `${cycle.id} is already used by another organisation`);
  }
  const id = existing?.id ?? cycle.id ?? newId('mc');
  const namesake = found.find((row) => named(row) && row.id !== id);
  if (namesake) {
    throw refused(
      [...at, 'name'],
      `merit cycle ${namesake.id} of this organisation already has the name ${JSON.stringify(cycle.name)}`,
    );
  }
  // Absent optional fields keep what is stored; a new cycle takes their defaults.
  const fields = {
    name: cycle.name,
    status: cycle.status,
    start_date: cycle.startDate,
    end_date: cycle.endDate,
    created_date: cycle.createdDate ?? (existing ? toIso(existing.created_date) : change.at),
    currency: cycle.currency,
    exchange_rates: cycle.exchangeRates
      ? JSON.stringify(cycle.exchangeRates)
      : (existing?.exchange_rates ?? '{}'),
  };
  const values = { ...fields, id, organization_id: organizationId, change_seq: change.nextStamp };
  if (!existing) {
    await trx
      .insertInto('merit_cycles')
      .values({ ...values, created_change_seq: change.nextStamp })
      .execute();
    change.used(1);
    // A cycle imported again under the id of one removed before is no longer removed.
    await forgetRemovedCycle(trx, organizationId, id);
    return { id, outcome: 'created' };
  }
  const stored = (column: keyof typeof fields) =>
    column.endsWith('_date') ? toIso(existing[column]) : existing[column];
  const keys = Object.keys(fields) as (keyof typeof fields)[];
  if (keys.every((column) => fields[column] === stored(column))) {
    return { id, outcome: 'unchanged' };
  }
  await trx.updateTable('merit_cycles').set(values).where('id', '=', id).execute();
  change.used(1);
  return { id, outcome: 'updated' };
}

// What an employee row takes from its staged row as it is.
const COPIED =
  'email, email_key, first_name, last_name, preferred_name, currency_code, currency_name, eligibility_status';

// New rows are inserted in the order of the employees list (cycle, last name, first
// name, id; PostgreSQL compares those as "C", migration 0001): the order of SQLite's
// table itself (migration 0006) and of PostgreSQL's page index. Filled from one end, its
// pages stay dense and are written once instead of split all over (5–7 % less time for a
// 50,000-employee file on SQLite, a 4 % smaller database).
const PAGE_ORDER: Record<Dialect, string> = {
  sqlite: 's.last_name, s.first_name, s.new_id',
  postgres: 's.last_name collate "C", s.first_name collate "C", s.new_id',
};

/**
 * One cycle's staged employees (file position `at`) against its stored ones, set-based:
 * 1. match each staged employee to a stored one: by id where given, else by email
 *    (case-insensitively) among the stored employees the file does not name by id, so that
 *    one stored employee is never matched twice (an employee the file renames by id gives
 *    up its old email to a new one); `same` when its stored text is what would be written;
 * 2. what the file does not list is removed with --prune, else kept — and a kept employee
 *    still owns its email;
 * 3. only what changed is written: replaced (deleted, then inserted) so that two employees
 *    may swap emails without tripping the unique index midway.
 */
async function mergeEmployees(
  trx: Tx,
  change: OrganizationChange,
  merge: { meritCycleId: string; at: Path; count: number; isNew: boolean; prune: boolean },
): Promise<EmployeeCounts> {
  const { organizationId, dialect } = change;
  const { meritCycleId, at, count } = merge;
  const run = (query: RawBuilder<unknown>) => query.execute(trx);
  // A value in a select list has no type from where it goes (PostgreSQL asks for one).
  const text = (value: string) => sql`cast(${value} as text)`;
  const first = async (query: RawBuilder<Record<string, string | number>>) =>
    (await query.execute(trx)).rows[0];
  const cycle = sql.lit(at[1] as number);
  const staging = sql.table(STAGING);
  const matches = sql.table(MATCHES);
  // The change's next stamps, one a row, in the order the rows are written.
  const stamps = (order: string) =>
    sql.raw(`${change.nextStamp - 1} + row_number() over (order by ${order})`);
  // The flat line's ids go in front of its tail (null without one: `||` keeps the null).
  const insert = (id: string, order: string, from: RawBuilder<unknown>) =>
    run(sql`insert into merit_cycle_employees
        (id, organization_id, merit_cycle_id, change_seq, ${sql.raw(COPIED)}, body, flat_key, flat_line)
      select ${sql.raw(id)}, ${text(organizationId)}, ${text(meritCycleId)}, ${stamps(order)},
             ${sql.raw(COPIED.replace(/\w+/g, 's.$&'))},
             ${sql.raw(storedBodySql(id, 's.body_tail'))}, s.flat_key,
             ${sql.raw(id)} || ',' || ${text(meritCycleId)} || ',' || s.flat_tail
        ${from} order by ${sql.raw(order)}`);

  // An id the file gives that a stored employee of another cycle has: never moved.
  const foreign = await first(sql`select s.employee_index, s.id from ${staging} s
      join merit_cycle_employees e on e.id = s.id
     where s.cycle_index = ${cycle} and e.merit_cycle_id <> ${meritCycleId}
     order by s.employee_index limit 1`);
  if (foreign) {
    throw refused(
      [...at, 'employees', Number(foreign.employee_index), 'id'],
      `${foreign.id} already belongs to another merit cycle`,
    );
  }
  if (merge.isNew) {
    // Nothing stored to match or remove: every employee is created.
    const order = PAGE_ORDER[dialect];
    await insert('s.new_id', order, sql`from ${staging} s where s.cycle_index = ${cycle}`);
    change.used(count);
    return { created: count, updated: 0, unchanged: 0, removed: 0 };
  }

  const unchangedBody = `e.body = ${storedBodySql('e.id', 's.body_tail')}`;
  // Unchanged, and the flat line it keeps is not the file's: written for another layout
  // key (an earlier release's), or none (stored before lines were kept).
  const compared = sql.raw(`case when ${unchangedBody} then 1 else 0 end,
    case when ${unchangedBody} and e.flat_key is distinct from s.flat_key then 1 else 0 end`);
  await run(sql`delete from ${matches}`);
  await run(sql`insert into ${matches} (seq, stored_id, same, other_line)
    select s.seq, e.id, ${compared} from ${staging} s join merit_cycle_employees e on e.id = s.id
     where s.cycle_index = ${cycle} and e.merit_cycle_id = ${meritCycleId}`);
  await run(sql`insert into ${matches} (seq, stored_id, same, other_line)
    select s.seq, e.id, ${compared} from ${staging} s join merit_cycle_employees e
        on e.merit_cycle_id = ${meritCycleId} and e.email_key = s.email_key
     where s.cycle_index = ${cycle} and s.id is null
       and not exists (select 1 from ${matches} m where m.stored_id = e.id)`);
  // Temporary tables get no statistics unless asked: the plans below depend on them.
  if (dialect === 'postgres') await run(sql`analyze ${matches}`);
  const unmatched = (e: string) =>
    sql.raw(`not exists (select 1 from ${MATCHES} m where m.stored_id = ${e}.id)`);

  if (!merge.prune) {
    const owner = await first(sql`select s.employee_index, e.id from ${staging} s
        join merit_cycle_employees e on e.merit_cycle_id = ${meritCycleId} and e.email_key = s.email_key
       where s.cycle_index = ${cycle} and ${unmatched('e')}
       order by s.employee_index limit 1`);
    if (owner) {
      throw refused(
        [...at, 'employees', Number(owner.employee_index), 'email'],
        `employee ${owner.id} of this merit cycle already has this email (import with --prune to replace employees the file no longer lists)`,
      );
    }
  }
  const tally = await first(
    sql`select count(*) as matched, coalesce(sum(same), 0) as same from ${matches}`,
  );
  const matched = Number(tally?.matched ?? 0);
  const unchanged = Number(tally?.same ?? 0);
  // An unchanged employee takes the file's line in place: its text is the same, so it is no
  // change (no stamp, no delta entry, no webhook event); sliced members follow it
  // (row-slices/membership.ts).
  await run(sql`update merit_cycle_employees
      set flat_key = s.flat_key,
          flat_line = merit_cycle_employees.id || ',' || ${text(meritCycleId)} || ',' || s.flat_tail
      from ${matches} m join ${staging} s on s.seq = m.seq
     where m.other_line = 1 and merit_cycle_employees.id = m.stored_id`);
  await run(sql`delete from merit_cycle_employees
    where id in (select stored_id from ${matches} where same = 0)`);
  let removed = 0;
  if (merge.prune) {
    await rememberPrunedEmployees(trx, change, meritCycleId, MATCHES);
    const result = await run(sql`delete from merit_cycle_employees
      where merit_cycle_id = ${meritCycleId} and ${unmatched('merit_cycle_employees')}`);
    removed = Number(result.numAffectedRows ?? 0n);
  }
  await insert(
    'coalesce(m.stored_id, s.new_id)',
    's.employee_index',
    sql`from ${staging} s left join ${matches} m on m.seq = s.seq
        where s.cycle_index = ${cycle} and (m.same is null or m.same = 0)`,
  );
  change.used(count - unchanged);
  // An employee imported again under the id of one pruned before is no longer removed.
  await forgetRemovedEmployees(trx, meritCycleId, STAGING, MATCHES, at[1] as number);
  return { created: count - matched, updated: matched - unchanged, unchanged, removed };
}
