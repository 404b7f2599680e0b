// The one loader of every import (a JSON or NDJSON file, CSV, the demo, a data set in
// memory): records in, one transaction, all of it or, on any problem, nothing. Loading the
// same data set twice changes nothing the second time (decisions.md §3).
//
// Streamed, in memory that does not grow with the file (docs/import-format.md):
// 1. Each record is validated as it arrives, and each valid employee is written, in
//    batches, to a staging table that lives only inside the import's transaction
//    (intake.ts, staging.ts; for a file, the reading and validating run in a worker
//    thread while this thread writes: intake-worker.ts). The organisation and the merit
//    cycles (a few hundred at most) are kept in memory; employees never are.
// 2. At the end of the file, the checks across records — an id or email given twice, a
//    cycle name or id given twice — are queries over the staging table that return the
//    offending records' positions, so problems keep their JSON paths (and lines).
// 3. Only when there is no problem at all is anything written: per cycle, set-based SQL
//    matches the staged employees to the stored ones (by id, else by email), checks ids of
//    other cycles and emails that kept employees still own, and replaces what changed.
// Any problem rolls the transaction back: the database is exactly as it was.
import { CompiledQuery, type Kysely } from 'kysely';
import { OrganizationChange } from '../changes/change.js';
import {
  forgetRemovedCycle,
  forgetRemovedEmployees,
  rememberPrunedEmployees,
} from '../changes/removals.js';
import { inOrganizationTransaction } from '../changes/transaction.js';
import { DEFAULT_CHANGE_RETENTION_DAYS } from '../config.js';
import type { DatabaseHandle, Dialect } from '../db/connect.js';
import type { Database, MeritCycleRow } from '../db/types.js';
import { fromBoolean, toBoolean, toIso } from '../db/values.js';
import { newId } from '../ids.js';
import { type CycleChange, recordImportEvents } from '../webhooks/outbox.js';
import { storedBodySql } from '../modules/employees/stored-body.js';
import { fileProblem, ImportError, type Path, ProblemList } from './errors.js';
import { type CycleState, type IntakeOutcome, type Stage, takeRecords } from './intake.js';
import { type ImportRecords, recordsOfDataSet } from './records.js';
import { type ImportMeritCycleRecord, type ImportRoot, repeats } from './schema.js';
import {
  createStaging,
  dropStaging,
  indexStaging,
  MATCHES,
  STAGING,
  StagingWriter,
} from './staging.js';
import type { IntakeWorker } from './intake-worker.js';
import type { Source } from './source.js';

type Tx = Kysely<Database>;

interface Counts {
  created: number;
  updated: number;
  unchanged: number;
}

export interface ImportSummary {
  /** `changed`: the fields of a stored organisation the import changed (none when created). */
  organization: { slug: string; created: boolean; changed: OrganizationField[] };
  meritCycles: Counts;
  employees: Counts & { removed: number };
}

export interface ImportOptions {
  /** Also remove the employees of an imported cycle that the data set no longer lists. */
  prune?: boolean;
  /** CHANGE_RETENTION_DAYS: the import purges the organisation's older tombstones. */
  changeRetentionDays?: number;
  /** The import's clock (tests move it instead of waiting); the real time by default. */
  now?: Date;
}

/** A validated data set (or its input) held in memory, loaded by the same loader. */
export function importDataSet(
  database: DatabaseHandle,
  dataSet: unknown,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  return importRecords(database, recordsOfDataSet(dataSet), options);
}

async function run(trx: Tx, text: string, parameters: readonly unknown[] = []) {
  return trx.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, [...parameters]));
}

/** Loads a data set given as records (records.ts), in this thread; see the top of this file. */
export function importRecords(
  database: DatabaseHandle,
  records: ImportRecords,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  return load(database, (stage) => takeRecords(records, database.dialect, stage), options);
}

/**
 * Loads a JSON or NDJSON file given as its bytes: read, parsed and validated by `worker`
 * (started for the file, and for this database's dialect) while this thread writes
 * (parallel-intake.ts). Fails with `signal`'s reason once it is aborted.
 */
export function importFile(
  database: DatabaseHandle,
  worker: IntakeWorker,
  source: Source,
  options: ImportOptions & { signal?: AbortSignal } = {},
): Promise<ImportSummary> {
  return load(database, (stage) => worker.take(source, stage, options.signal), options);
}

/** Step 1 of an import (intake.ts), with `stage` writing each batch to the staging table. */
type RunIntake = (stage: Stage) => Promise<IntakeOutcome>;

async function load(
  database: DatabaseHandle,
  intake: RunIntake,
  options: ImportOptions,
): Promise<ImportSummary> {
  const now = (options.now ?? new Date()).toISOString();
  const { dialect } = database;
  const summary = await inOrganizationTransaction(database, async (trx, lock) => {
    await createStaging(trx, dialect);
    const writer = new StagingWriter(trx);
    const taken = await intake((batch) => writer.write(batch));
    await writer.finish();
    await indexStaging(trx, dialect);

    if (taken.shapeProblems.length > 0) throw new ImportError(taken.shapeProblems);
    if (!taken.rootSeen) throw fileProblem('(the file): holds no data set');
    const problems = new ProblemList(taken.problems.kept, taken.problems.total);
    await checkRepeats(trx, taken, problems);
    if (problems.total > 0) throw problems.error();
    const root = taken.root as ImportRoot;
    await lock(root.organization.slug);
    const merged = await merge(trx, dialect, root, taken.cycles, options, now);
    await dropStaging(trx, dialect);
    // Servers on other processes learn of the commit (PostgreSQL; SQLite's own check
    // sees it), and so does this process's response cache, below.
    await database.revision.announce(trx);
    return merged;
  });
  database.revision.changed();
  return summary;
}

/** Lines of staged rows: `line 7: ` for NDJSON, nothing for JSON. */
const lineOf = (line: unknown) => (typeof line === 'number' ? line : undefined);

// Each check below first asks whether there is any repeat at all: a grouping (a hash
// aggregate on PostgreSQL) costs a fraction of the window query that then finds and
// orders the repeats, and almost every import has none.
async function anyRows(trx: Tx, text: string): Promise<boolean> {
  const { rows } = await run(trx, text);
  return rows.length > 0;
}

/**
 * The checks across records (docs/import-format.md, "All or nothing"): repeats within a
 * cycle for each cycle whose records are all valid, and repeats across cycles when every
 * record is.
 */
async function checkRepeats(trx: Tx, intake: IntakeOutcome, problems: ProblemList): Promise<void> {
  const report = (line: number | undefined, path: Path, message: string, other: Path) =>
    problems.add({ path, line, message, other });
  const limit = 51;
  const clean = intake.cycles.flatMap((state, index) => (state.faulty ? [] : [index]));
  if (clean.length > 0 && clean.some((index) => (intake.cycles[index]?.employees ?? 0) > 1)) {
    for (const [column, which] of [
      ['id', 0],
      ['email_key', 1],
    ] as const) {
      const repeated = await anyRows(
        trx,
        `select 1 from ${STAGING}
          where ${column} is not null and cycle_index in (${clean.join(', ')})
          group by cycle_index, ${column} having count(*) > 1 limit 1`,
      );
      if (!repeated) continue;
      const { rows } = await run(
        trx,
        `select cycle_index, employee_index, line, first_index, count(*) over () as total from (
           select cycle_index, employee_index, line,
                  min(employee_index) over (partition by cycle_index, ${column}) as first_index
             from ${STAGING}
            where ${column} is not null and cycle_index in (${clean.join(', ')})
         ) repeated
         where employee_index <> first_index
         order by cycle_index, employee_index
         limit ${limit}`,
      );
      for (const row of rows) {
        const cycle = Number(row.cycle_index);
        const employee = Number(row.employee_index);
        const first = Number(row.first_index);
        report(
          lineOf(row.line),
          ['meritCycles', cycle, 'employees', employee, which === 0 ? 'id' : 'email'],
          which === 0 ? repeats.employeeId : repeats.email,
          ['meritCycles', cycle, 'employees', first],
        );
      }
      problems.addUncounted(Math.max(0, Number(rows[0]?.total ?? 0) - rows.length));
    }
  }
  if (intake.recordProblems > 0) return;

  // Across cycles: ids and names of cycles (in memory: cycles are few), employee ids.
  const ids = new Map<string, number>();
  const names = new Map<string, number>();
  for (const [index, state] of intake.cycles.entries()) {
    const cycle = state?.cycle;
    if (!cycle) continue;
    if (cycle.id !== undefined) {
      const same = ids.get(cycle.id);
      if (same !== undefined) {
        report(state.line, ['meritCycles', index, 'id'], repeats.cycleId, ['meritCycles', same]);
      } else ids.set(cycle.id, index);
    }
    const sameName = names.get(cycle.name);
    if (sameName !== undefined) {
      report(state.line, ['meritCycles', index, 'name'], repeats.cycleName, [
        'meritCycles',
        sameName,
      ]);
    } else names.set(cycle.name, index);
  }
  if (
    intake.cycles.filter((state) => state.employees > 0).length > 1 &&
    (await anyRows(
      trx,
      `select 1 from ${STAGING} where id is not null
        group by id having min(cycle_index) <> max(cycle_index) limit 1`,
    ))
  ) {
    const { rows } = await run(
      trx,
      `select cycle_index, employee_index, line, first_cycle, first_index, count(*) over () as total from (
         select cycle_index, employee_index, line,
                first_value(cycle_index) over same_id as first_cycle,
                first_value(employee_index) over same_id as first_index
           from ${STAGING}
          where id is not null
         window same_id as (partition by id order by cycle_index, employee_index)
       ) repeated
       where first_cycle <> cycle_index
       order by cycle_index, employee_index
       limit ${limit}`,
    );
    for (const row of rows) {
      const cycle = Number(row.cycle_index);
      const employee = Number(row.employee_index);
      report(
        lineOf(row.line),
        ['meritCycles', cycle, 'employees', employee, 'id'],
        repeats.employeeIdElsewhere,
        ['meritCycles', Number(row.first_cycle), 'employees', Number(row.first_index)],
      );
    }
    problems.addUncounted(Math.max(0, Number(rows[0]?.total ?? 0) - rows.length));
  }
}

async function merge(
  trx: Tx,
  dialect: Dialect,
  root: ImportRoot,
  cycles: readonly CycleState[],
  options: ImportOptions,
  now: string,
): Promise<ImportSummary> {
  const organization = await upsertOrganization(trx, root.organization, now);
  // After the import lock: the organisation's changes are stamped in commit order.
  const change = await OrganizationChange.begin(trx, dialect, organization.id, now);
  const summary: ImportSummary = {
    organization: {
      slug: root.organization.slug,
      created: organization.created,
      changed: organization.changed,
    },
    meritCycles: { created: 0, updated: 0, unchanged: 0 },
    employees: { created: 0, updated: 0, unchanged: 0, removed: 0 },
  };
  const changes: CycleChange[] = [];
  for (const [index, state] of cycles.entries()) {
    const cycle = state.cycle as ImportMeritCycleRecord;
    const { id, outcome } = await upsertMeritCycle(trx, change, cycle, index);
    summary.meritCycles[outcome]++;
    const cycleChange: CycleChange = { meritCycleId: id, cycle: outcome };
    changes.push(cycleChange);
    if (state.listsEmployees) {
      const counts = await mergeEmployees(trx, dialect, change, {
        meritCycleId: id,
        index,
        count: state.employees,
        isNew: outcome === 'created',
        prune: options.prune === true,
      });
      for (const key of ['created', 'updated', 'unchanged', 'removed'] as const) {
        summary.employees[key] += counts[key];
      }
      cycleChange.employees = counts;
    }
  }
  await change.finish(trx, options.changeRetentionDays ?? DEFAULT_CHANGE_RETENTION_DAYS);
  // Webhook events, in this transaction: none for an import that fails (src/webhooks).
  await recordImportEvents(trx, organization.id, changes, now);
  return summary;
}

export type OrganizationField = 'name' | 'apiKeysEnabled';

async function upsertOrganization(
  trx: Tx,
  input: ImportRoot['organization'],
  now: string,
): Promise<{ id: string; created: boolean; changed: OrganizationField[] }> {
  const existing = await trx
    .selectFrom('organizations')
    .selectAll()
    .where('slug', '=', input.slug)
    .executeTakeFirst();
  if (!existing) {
    const id = newId('org');
    await trx
      .insertInto('organizations')
      .values({
        id,
        slug: input.slug,
        name: input.name,
        api_keys_enabled: fromBoolean(input.apiKeysEnabled ?? false),
        created_at: now,
      })
      .execute();
    return { id, created: true, changed: [] };
  }
  // An absent apiKeysEnabled leaves the organisation's setting as it is.
  const apiKeysEnabled = input.apiKeysEnabled ?? toBoolean(existing.api_keys_enabled);
  const changed: OrganizationField[] = [];
  if (existing.name !== input.name) changed.push('name');
  if (apiKeysEnabled !== toBoolean(existing.api_keys_enabled)) changed.push('apiKeysEnabled');
  if (changed.length > 0) {
    await trx
      .updateTable('organizations')
      .set({ name: input.name, api_keys_enabled: fromBoolean(apiKeysEnabled) })
      .where('id', '=', existing.id)
      .execute();
  }
  return { id: existing.id, created: false, changed };
}

type Outcome = 'created' | 'updated' | 'unchanged';

/** A problem the stored data finds with the file: the only one reported. */
const refused = (path: Path, message: string) => new ImportError([{ path, message }]);

async function upsertMeritCycle(
  trx: Tx,
  change: OrganizationChange,
  cycle: ImportMeritCycleRecord,
  index: number,
): Promise<{ id: string; outcome: Outcome }> {
  const at: Path = ['meritCycles', index];
  const { organizationId, at: now } = change;
  // Matched by id where given, else by organisation and name.
  let existing: MeritCycleRow | undefined;
  if (cycle.id) {
    existing = await trx
      .selectFrom('merit_cycles')
      .selectAll()
      .where('id', '=', cycle.id)
      .executeTakeFirst();
    if (existing && existing.organization_id !== organizationId) {
      throw refused([...at, 'id'], `${cycle.id} is already used by another organisation`);
    }
  } else {
    existing = await trx
      .selectFrom('merit_cycles')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', cycle.name)
      .executeTakeFirst();
  }
  const id = existing?.id ?? cycle.id ?? newId('mc');
  const namesake = await trx
    .selectFrom('merit_cycles')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('name', '=', cycle.name)
    .where('id', '!=', id)
    .executeTakeFirst();
  if (namesake) {
    throw refused(
      [...at, 'name'],
      `merit cycle ${namesake.id} of this organisation already has the name ${JSON.stringify(cycle.name)}`,
    );
  }

  // Absent optional fields keep what is stored; a new cycle takes their defaults.
  const values = {
    id,
    organization_id: organizationId,
    name: cycle.name,
    status: cycle.status,
    start_date: cycle.startDate,
    end_date: cycle.endDate,
    created_date: cycle.createdDate ?? (existing ? toIso(existing.created_date) : now),
    currency: cycle.currency,
    exchange_rates: cycle.exchangeRates
      ? JSON.stringify(cycle.exchangeRates)
      : (existing?.exchange_rates ?? '{}'),
    change_seq: change.nextStamp,
  };
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
  const same =
    existing.name === values.name &&
    existing.status === values.status &&
    toIso(existing.start_date) === values.start_date &&
    toIso(existing.end_date) === values.end_date &&
    toIso(existing.created_date) === values.created_date &&
    existing.currency === values.currency &&
    existing.exchange_rates === values.exchange_rates;
  if (same) return { id, outcome: 'unchanged' };
  await trx.updateTable('merit_cycles').set(values).where('id', '=', id).execute();
  change.used(1);
  return { id, outcome: 'updated' };
}

interface CycleMerge {
  meritCycleId: string;
  /** The cycle's index in the file: its staged rows. */
  index: number;
  /** How many employees the file lists for it. */
  count: number;
  /** Created by this import: nothing stored to match. */
  isNew: boolean;
  prune: boolean;
}

const INSERT_COLUMNS =
  'id, organization_id, merit_cycle_id, change_seq, email, email_key, first_name, last_name, preferred_name, currency_code, currency_name, eligibility_status, body';
const STAGED_VALUES =
  's.email, s.email_key, s.first_name, s.last_name, s.preferred_name, s.currency_code, s.currency_name, s.eligibility_status';

// New rows are inserted in the order of the employees list (cycle, last name, first
// name, id; PostgreSQL compares those as "C", migration 0001): the order of SQLite's
// table itself (migration 0006) and of PostgreSQL's page index. Filled from one end, its
// pages stay dense and are written once, instead of being split all over by rows in file
// order (measured with the covering index of 0003: 5–7 % less time for a 50,000-employee
// file on SQLite, 4 % smaller database).
const PAGE_ORDER: Record<Dialect, string> = {
  sqlite: 's.last_name, s.first_name, s.new_id',
  postgres: 's.last_name collate "C", s.first_name collate "C", s.new_id',
};

/**
 * The change stamps of the rows an insert writes in `order` (src/changes/change.ts): the
 * change's next stamps, one a row, in the order the rows are written. Integers of ours,
 * inlined.
 */
const stampsInOrder = (change: OrganizationChange, order: string) =>
  `${change.nextStamp - 1} + row_number() over (order by ${order})`;

/** One cycle's staged employees against its stored ones, set-based. */
async function mergeEmployees(
  trx: Tx,
  dialect: Dialect,
  change: OrganizationChange,
  merge: CycleMerge,
): Promise<Counts & { removed: number }> {
  const { organizationId } = change;
  const { meritCycleId, index } = merge;
  const at: Path = ['meritCycles', index];
  const p = (n: number) => (dialect === 'postgres' ? `$${n}::text` : '?');

  // An id the file gives that a stored employee of another cycle has: never moved.
  const elsewhere = await run(
    trx,
    `select s.employee_index, s.id from ${STAGING} s
       join merit_cycle_employees e on e.id = s.id
      where s.cycle_index = ${index} and s.id is not null and e.merit_cycle_id <> ${p(1)}
      order by s.employee_index limit 1`,
    [meritCycleId],
  );
  const foreign = elsewhere.rows[0];
  if (foreign) {
    throw refused(
      [...at, 'employees', Number(foreign.employee_index), 'id'],
      `${String(foreign.id)} already belongs to another merit cycle`,
    );
  }

  if (merge.isNew) {
    // Nothing stored to match or remove: every employee is created.
    await run(
      trx,
      `insert into merit_cycle_employees (${INSERT_COLUMNS})
       select s.new_id, ${p(1)}, ${p(2)}, ${stampsInOrder(change, PAGE_ORDER[dialect])},
              ${STAGED_VALUES}, ${storedBodySql('s.new_id', 's.body_tail')}
         from ${STAGING} s where s.cycle_index = ${index} order by ${PAGE_ORDER[dialect]}`,
      [organizationId, meritCycleId],
    );
    change.used(merge.count);
    return { created: merge.count, updated: 0, unchanged: 0, removed: 0 };
  }

  // 1. Match every staged employee to a stored one: by id where given, else by email
  //    (case-insensitively) among the stored employees the file does not name by id, so
  //    that one stored employee is never matched twice (an employee the file renames
  //    by id gives up its old email to a new one); `same` when its stored body is exactly
  //    what would be written.
  await run(trx, `delete from ${MATCHES}`);
  await run(
    trx,
    `insert into ${MATCHES} (seq, stored_id, same)
     select s.seq, e.id, case when e.body = ${storedBodySql('e.id', 's.body_tail')} then 1 else 0 end
       from ${STAGING} s join merit_cycle_employees e on e.id = s.id
      where s.cycle_index = ${index} and s.id is not null and e.merit_cycle_id = ${p(1)}`,
    [meritCycleId],
  );
  await run(
    trx,
    `insert into ${MATCHES} (seq, stored_id, same)
     select s.seq, e.id, case when e.body = ${storedBodySql('e.id', 's.body_tail')} then 1 else 0 end
       from ${STAGING} s join merit_cycle_employees e
         on e.merit_cycle_id = ${p(1)} and e.email_key = s.email_key
      where s.cycle_index = ${index} and s.id is null
        and not exists (select 1 from ${MATCHES} m where m.stored_id = e.id)`,
    [meritCycleId],
  );
  // Temporary tables get no statistics unless asked: the plans below depend on them.
  if (dialect === 'postgres') await run(trx, `analyze ${MATCHES}`);

  // 2. What the file does not list: removed with --prune, else kept — and a kept
  //    employee still owns its email.
  if (!merge.prune) {
    const kept = await run(
      trx,
      `select s.employee_index, e.id from ${STAGING} s
         join merit_cycle_employees e on e.merit_cycle_id = ${p(1)} and e.email_key = s.email_key
        where s.cycle_index = ${index}
          and not exists (select 1 from ${MATCHES} m where m.stored_id = e.id)
        order by s.employee_index limit 1`,
      [meritCycleId],
    );
    const owner = kept.rows[0];
    if (owner) {
      throw refused(
        [...at, 'employees', Number(owner.employee_index), 'email'],
        `employee ${String(owner.id)} of this merit cycle already has this email (import with --prune to replace employees the file no longer lists)`,
      );
    }
  }

  // 3. Write only what changed. Changed rows are replaced (delete, then insert) so that
  //    two employees may swap emails without tripping the unique index midway.
  const { rows } = await run(
    trx,
    `select count(*) as matched, coalesce(sum(same), 0) as same from ${MATCHES}`,
  );
  const matched = Number(rows[0]?.matched ?? 0);
  const unchanged = Number(rows[0]?.same ?? 0);
  await run(
    trx,
    `delete from merit_cycle_employees where id in (select stored_id from ${MATCHES} where same = 0)`,
  );
  let removed = 0;
  if (merge.prune) {
    await rememberPrunedEmployees(trx, change, meritCycleId, MATCHES);
    const result = await run(
      trx,
      `delete from merit_cycle_employees
        where merit_cycle_id = ${p(1)}
          and not exists (select 1 from ${MATCHES} m where m.stored_id = merit_cycle_employees.id)`,
      [meritCycleId],
    );
    removed = Number(result.numAffectedRows ?? 0n);
  }
  await run(
    trx,
    `insert into merit_cycle_employees (${INSERT_COLUMNS})
     select coalesce(m.stored_id, s.new_id), ${p(1)}, ${p(2)},
            ${stampsInOrder(change, 's.employee_index')}, ${STAGED_VALUES},
            ${storedBodySql('coalesce(m.stored_id, s.new_id)', 's.body_tail')}
       from ${STAGING} s left join ${MATCHES} m on m.seq = s.seq
      where s.cycle_index = ${index} and (m.same is null or m.same = 0)
      order by s.employee_index`,
    [organizationId, meritCycleId],
  );
  change.used(merge.count - unchanged);
  // An employee imported again under the id of one pruned before is no longer removed.
  await forgetRemovedEmployees(trx, meritCycleId, STAGING, MATCHES, index);
  return {
    created: merge.count - matched,
    updated: matched - unchanged,
    unchanged,
    removed,
  };
}
