// Row scopes (docs/api-keys.md, "Slices"): a key may read a slice of its organisation's
// employees, by text column conditions and by reporting line.
//
// - A slice is stored once per organisation and definition (`row_slices`), shared by the
//   keys that read it; audit entries name the slice a request was read through, so a
//   slice outlives its keys.
// - Its members are precomputed per merit cycle (`row_slice_members`) by the import that
//   changes the cycle and by the key's creation, in their transactions: a sliced page is
//   then a range scan of the members in list order — (slice, cycle, last name, first
//   name, id), the employee table's own key after the slice — never a scan of the cycle
//   per request. A member carries its employee's stored text: a slice's employees lie
//   all over the cycle's pages, and reading them there by key took three times as long
//   as reading the same number of employees of a cycle of their own (docs/benchmarks.md,
//   "Row slices"); side by side in the members' key, a slice reads like a cycle.
// - A member carries a change stamp (the employee's, or the stamp of the import that
//   brought it into the slice), and an employee that left the slice leaves a departure,
//   so that a sliced delta reads the slice's own changes in change order.
// - The organisation names its manager column; each employee's manager email (lower case)
//   is kept beside it, indexed by cycle, so that a reporting line is walked by index
//   lookups, one level at a time.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function rowSlices(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  const stamp = dialect === 'postgres' ? sql`bigint` : sql`integer`;
  // Members are walked in the employees list's order (migration 0001's collation).
  const sortText = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
  const withoutRowid = dialect === 'sqlite' ? sql` without rowid` : sql``;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // The column key (or `key/part`) that holds an employee's manager's email.
      await db.schema.alterTable('organizations').addColumn('manager_column', 'text').execute();
      await db.schema
        .alterTable('merit_cycle_employees')
        .addColumn('manager_key', 'text')
        .execute();
      await db.schema
        .createIndex('merit_cycle_employees_managers')
        .on('merit_cycle_employees')
        .columns(['merit_cycle_id', 'manager_key'])
        .where(sql.ref('manager_key'), 'is not', null)
        .execute();

      await db.schema
        .createTable('row_slices')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) =>
          c.notNull().references('organizations.id').onDelete('cascade'),
        )
        // The definition as canonical JSON (src/row-slices/definition.ts): one row each.
        .addColumn('definition', 'text', (c) => c.notNull())
        // The definition as people read it: `department in (Engineering, Sales)`.
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addUniqueConstraint('row_slices_definition_unique', ['organization_id', 'definition'])
        .execute();

      await sql`create table row_slice_members (
        slice_id text not null references row_slices (id) on delete cascade,
        merit_cycle_id text not null references merit_cycles (id) on delete cascade,
        last_name ${sortText} not null,
        first_name ${sortText} not null,
        id ${sortText} not null,
        change_seq ${stamp} not null,
        body text not null,
        primary key (slice_id, merit_cycle_id, last_name, first_name, id)
      )${withoutRowid}`.execute(db);
      await db.schema
        .createIndex('row_slice_members_changes')
        .on('row_slice_members')
        .columns(['slice_id', 'merit_cycle_id', 'change_seq', 'id'])
        .execute();
      // Whether an employee is a member, by id (the refresh's comparisons).
      await db.schema
        .createIndex('row_slice_members_employee')
        .on('row_slice_members')
        .columns(['slice_id', 'merit_cycle_id', 'id'])
        .unique()
        .execute();

      await sql`create table row_slice_departures (
        slice_id text not null references row_slices (id) on delete cascade,
        merit_cycle_id text not null references merit_cycles (id) on delete cascade,
        employee_id ${sortText} not null,
        organization_id text not null,
        change_seq ${stamp} not null,
        removed_at ${timestamp} not null,
        primary key (slice_id, merit_cycle_id, employee_id)
      )${withoutRowid}`.execute(db);
      await db.schema
        .createIndex('row_slice_departures_changes')
        .on('row_slice_departures')
        .columns(['slice_id', 'merit_cycle_id', 'change_seq', 'employee_id'])
        .execute();
      // Purged with the organisation's other tombstones.
      await db.schema
        .createIndex('row_slice_departures_age')
        .on('row_slice_departures')
        .columns(['organization_id', 'removed_at'])
        .execute();

      await db.schema.alterTable('api_keys').addColumn('row_slice_id', 'text').execute();
      await db.schema.alterTable('audit_entries').addColumn('row_slice_id', 'text').execute();
      await watchKeyColumns(db, dialect, `${WATCHED_BEFORE}, row_slice_id`);
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await watchKeyColumns(db, dialect, WATCHED_BEFORE);
      await db.schema.alterTable('audit_entries').dropColumn('row_slice_id').execute();
      await db.schema.alterTable('api_keys').dropColumn('row_slice_id').execute();
      await db.schema.dropTable('row_slice_departures').execute();
      await db.schema.dropTable('row_slice_members').execute();
      await db.schema.dropTable('row_slices').execute();
      await db.schema.dropIndex('merit_cycle_employees_managers').execute();
      await db.schema.alterTable('merit_cycle_employees').dropColumn('manager_key').execute();
      await db.schema.alterTable('organizations').dropColumn('manager_column').execute();
    },
  };
}

// The columns the keys-revision trigger watches after migration 0016.
const WATCHED_BEFORE =
  'revoked_at, secret_hash, organization_id, ' +
  'cycle_scope, hidden_columns, expires_at, previous_secret_hash, previous_secret_expires_at, ' +
  'allowed_addresses, hidden_column_types';

// The keys-revision trigger of migration 0007, recreated to watch `columns` (0016's
// watchKeyColumns as it was when this migration was written).
async function watchKeyColumns(
  db: Kysely<unknown>,
  dialect: Dialect,
  columns: string,
): Promise<void> {
  if (dialect === 'postgres') {
    await sql.raw('drop trigger if exists api_keys_changed on api_keys').execute(db);
    await sql
      .raw(`create trigger api_keys_changed after update of ${columns} or delete
        on api_keys for each statement execute function api_keys_changed()`)
      .execute(db);
  } else {
    await sql.raw('drop trigger if exists api_keys_changed').execute(db);
    await sql
      .raw(`create trigger api_keys_changed after update of ${columns} on api_keys
        begin update api_keys_revision set revision = revision + 1 where id = 1; end`)
      .execute(db);
  }
}
