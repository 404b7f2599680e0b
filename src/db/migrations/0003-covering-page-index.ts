// The employees page from one index (docs/benchmarks.md). In SQLite a page of 100 read
// through the 0001 index visits 100 table rows scattered over the cycle's pages (rows are
// stored in import order, the list is in name order): on a large cycle most of a request's
// database time. With `body` in the index, the page is one range scan over adjacent index
// entries and the table is never touched. It replaces the 0001 index, whose columns it
// starts with.
//
// PostgreSQL keeps the 0001 index: a B-tree entry is limited to about 2.7 KB, and an
// employee's body (its columns are open) may be larger, which would make such an import
// fail. Its heap reads are served from shared buffers.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function coveringPageIndex(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      await db.schema
        .createIndex('merit_cycle_employees_page_covering')
        .on('merit_cycle_employees')
        .columns(['organization_id', 'merit_cycle_id', 'last_name', 'first_name', 'id', 'body'])
        .execute();
      await db.schema.dropIndex('merit_cycle_employees_page').execute();
      // The planner's statistics, so that it prefers the covering index.
      await sql`analyze merit_cycle_employees`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      await db.schema
        .createIndex('merit_cycle_employees_page')
        .on('merit_cycle_employees')
        .columns(['organization_id', 'merit_cycle_id', 'last_name', 'first_name', 'id'])
        .execute();
      await db.schema.dropIndex('merit_cycle_employees_page_covering').execute();
    },
  };
}
