// What the web application's management pages show (docs/web-app.md): Settings → Users,
// when each user last signed in (kept on the user: sessions end and are deleted); Settings
// → Data, each merit cycle's employee count and last import. The count is kept by every
// import (src/import/cycle-imports.ts) rather than counted for each page: an exact count of
// a cycle of a million employees reads all its index entries (docs/web-app.md).
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function webManagement(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').addColumn('last_signed_in_at', timestamp).execute();
      await db.schema
        .createTable('merit_cycle_imports')
        .addColumn('merit_cycle_id', 'text', (c) =>
          c.primaryKey().references('merit_cycles.id').onDelete('cascade'),
        )
        .addColumn('employee_count', 'bigint', (c) => c.notNull())
        // The last import of the cycle; null for a cycle imported before this migration.
        .addColumn('imported_at', timestamp)
        // The user's email (the web application), or `cli` (`compplan import`).
        .addColumn('imported_by', 'text')
        // JSON {created, updated, unchanged, removed}; null when the import did not list
        // the cycle's employees (or before this migration).
        .addColumn('employees', 'text')
        .execute();
      // Counted once, here; from now on each import keeps the count.
      await sql`insert into merit_cycle_imports (merit_cycle_id, employee_count)
        select c.id, (select count(*) from merit_cycle_employees e where e.merit_cycle_id = c.id)
          from merit_cycles c`.execute(db);
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('merit_cycle_imports').execute();
      await db.schema.alterTable('users').dropColumn('last_signed_in_at').execute();
    },
  };
}
