// Writes a validated DataSet in one transaction: all of it or, on any problem, nothing.
// Loading the same data set twice changes nothing the second time (decisions.md §3).
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { Database, MeritCycleRow } from '../db/types.js';
import { fromBoolean, toBoolean, toIso } from '../db/values.js';
import { newId } from '../ids.js';
import { toEmployee } from '../modules/employees/repository.js';
import { ImportError } from './errors.js';
import type { DataSet, ImportEmployee, ImportMeritCycle } from './schema.js';

type Tx = Kysely<Database>;

interface Counts {
  created: number;
  updated: number;
  unchanged: number;
}

export interface ImportSummary {
  organization: { slug: string; created: boolean };
  meritCycles: Counts;
  employees: Counts & { removed: number };
}

export interface ImportOptions {
  /** Also remove the employees of an imported cycle that the data set no longer lists. */
  prune?: boolean;
}

// Rows per INSERT: well under SQLite's bound-parameter limit at 13 columns a row.
const INSERT_CHUNK = 500;

/**
 * Runs `work` in a transaction that no other import can interleave with: SQLite takes the
 * write lock at BEGIN IMMEDIATE; PostgreSQL takes a per-organisation advisory lock.
 */
async function inImportTransaction<T>(
  { db, dialect }: DatabaseHandle,
  organizationSlug: string,
  work: (trx: Tx) => Promise<T>,
): Promise<T> {
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`compplan-import:${organizationSlug}`}))`.execute(
        trx,
      );
      return work(trx);
    });
  }
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}

export async function importDataSet(
  database: DatabaseHandle,
  dataSet: DataSet,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const now = new Date().toISOString();
  return inImportTransaction(database, dataSet.organization.slug, async (trx) => {
    const organization = await upsertOrganization(trx, dataSet.organization, now);
    const summary: ImportSummary = {
      organization: { slug: dataSet.organization.slug, created: organization.created },
      meritCycles: { created: 0, updated: 0, unchanged: 0 },
      employees: { created: 0, updated: 0, unchanged: 0, removed: 0 },
    };
    for (const [index, cycle] of dataSet.meritCycles.entries()) {
      const path = `meritCycles[${index}]`;
      const { id, outcome } = await upsertMeritCycle(trx, organization.id, cycle, path, now);
      summary.meritCycles[outcome]++;
      if (cycle.employees) {
        const counts = await loadEmployees(
          trx,
          organization.id,
          id,
          cycle.employees,
          path,
          options,
        );
        for (const key of ['created', 'updated', 'unchanged', 'removed'] as const) {
          summary.employees[key] += counts[key];
        }
      }
    }
    return summary;
  });
}

async function upsertOrganization(trx: Tx, input: DataSet['organization'], now: string) {
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
    return { id, created: true };
  }
  // An absent apiKeysEnabled leaves the organisation's setting as it is.
  const apiKeysEnabled = input.apiKeysEnabled ?? toBoolean(existing.api_keys_enabled);
  if (existing.name !== input.name || apiKeysEnabled !== toBoolean(existing.api_keys_enabled)) {
    await trx
      .updateTable('organizations')
      .set({ name: input.name, api_keys_enabled: fromBoolean(apiKeysEnabled) })
      .where('id', '=', existing.id)
      .execute();
  }
  return { id: existing.id, created: false };
}

type Outcome = 'created' | 'updated' | 'unchanged';

async function upsertMeritCycle(
  trx: Tx,
  organizationId: string,
  cycle: ImportMeritCycle,
  path: string,
  now: string,
): Promise<{ id: string; outcome: Outcome }> {
  // Matched by id where given, else by organisation and name.
  let existing: MeritCycleRow | undefined;
  if (cycle.id) {
    existing = await trx
      .selectFrom('merit_cycles')
      .selectAll()
      .where('id', '=', cycle.id)
      .executeTakeFirst();
    if (existing && existing.organization_id !== organizationId) {
      throw new ImportError([`${path}.id: ${cycle.id} is already used by another organisation`]);
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
    throw new ImportError([
      `${path}.name: merit cycle ${namesake.id} of this organisation already has the name ${JSON.stringify(cycle.name)}`,
    ]);
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
  };
  if (!existing) {
    await trx.insertInto('merit_cycles').values(values).execute();
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
  return { id, outcome: 'updated' };
}

interface StoredEmployee {
  id: string;
  email_key: string;
  body: string;
}

async function loadEmployees(
  trx: Tx,
  organizationId: string,
  meritCycleId: string,
  employees: readonly ImportEmployee[],
  cyclePath: string,
  options: ImportOptions,
): Promise<Counts & { removed: number }> {
  const stored = await trx
    .selectFrom('merit_cycle_employees')
    .select(['id', 'email_key', 'body'])
    .where('merit_cycle_id', '=', meritCycleId)
    .execute();
  const byId = new Map(stored.map((row) => [row.id, row]));
  const byEmail = new Map(stored.map((row) => [row.email_key, row]));

  // 1. Match every employee of the file to a stored one (by id where given, else by
  //    email, case-insensitively) or give it a new id.
  const planned: {
    employee: ImportEmployee;
    id: string;
    emailKey: string;
    stored?: StoredEmployee;
  }[] = [];
  for (const [index, employee] of employees.entries()) {
    const emailKey = employee.email.toLowerCase();
    const match = employee.id ? byId.get(employee.id) : byEmail.get(emailKey);
    if (employee.id && !match) {
      const elsewhere = await trx
        .selectFrom('merit_cycle_employees')
        .select('id')
        .where('id', '=', employee.id)
        .executeTakeFirst();
      if (elsewhere) {
        throw new ImportError([
          `${cyclePath}.employees[${index}].id: ${employee.id} already belongs to another merit cycle`,
        ]);
      }
    }
    planned.push({
      employee,
      id: match?.id ?? employee.id ?? newId('mce'),
      emailKey,
      ...(match ? { stored: match } : {}),
    });
  }

  // 2. What stays that the file does not list: removed with --prune, else kept — and
  //    then it still owns its email.
  const listed = new Set(planned.map((plan) => plan.id));
  const unlisted = stored.filter((row) => !listed.has(row.id));
  if (!options.prune) {
    const keptEmails = new Map(unlisted.map((row) => [row.email_key, row.id]));
    for (const [index, plan] of planned.entries()) {
      const owner = keptEmails.get(plan.emailKey);
      if (owner) {
        throw new ImportError([
          `${cyclePath}.employees[${index}].email: employee ${owner} of this merit cycle already has this email (import with --prune to replace employees the file no longer lists)`,
        ]);
      }
    }
  }

  // 3. Write only what changed. Changed rows are replaced (delete, then insert) so that
  //    two employees may swap emails without tripping the unique index midway.
  const rows = planned.map((plan) =>
    toRow(plan.employee, plan.id, plan.emailKey, organizationId, meritCycleId),
  );
  const changed = rows.filter((row, index) => planned[index]?.stored?.body !== row.body);
  const replaced = changed.filter((row) => byId.has(row.id)).map((row) => row.id);
  const removed = options.prune ? unlisted.map((row) => row.id) : [];
  for (const ids of chunks([...replaced, ...removed], INSERT_CHUNK)) {
    await trx.deleteFrom('merit_cycle_employees').where('id', 'in', ids).execute();
  }
  for (const chunk of chunks(changed, INSERT_CHUNK)) {
    await trx.insertInto('merit_cycle_employees').values(chunk).execute();
  }
  return {
    created: changed.length - replaced.length,
    updated: replaced.length,
    unchanged: rows.length - changed.length,
    removed: removed.length,
  };
}

function toRow(
  employee: ImportEmployee,
  id: string,
  emailKey: string,
  organizationId: string,
  meritCycleId: string,
) {
  const preferredName = employee.preferredName ?? null;
  const body = JSON.stringify(
    toEmployee({
      id,
      email: employee.email,
      firstName: employee.firstName,
      lastName: employee.lastName,
      preferredName,
      currencyCode: employee.currencyCode,
      eligibilityStatus: employee.eligibilityStatus,
      columns: employee.columns,
    }),
  );
  return {
    id,
    organization_id: organizationId,
    merit_cycle_id: meritCycleId,
    email: employee.email,
    email_key: emailKey,
    first_name: employee.firstName,
    last_name: employee.lastName,
    preferred_name: preferredName,
    currency_code: employee.currencyCode.code,
    currency_name: employee.currencyCode.value,
    eligibility_status: employee.eligibilityStatus,
    columns: JSON.stringify(employee.columns),
    body,
  };
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}
