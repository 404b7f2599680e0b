// An employee's columns are stored once, inside `body` (the employee as the API serves
// it), no longer also as a column of their own: nothing read that copy, and at about 200
// bytes of an employee's 1.9 KB on SQLite (table and indexes) it was a tenth of what every
// import wrote (docs/benchmarks.md). On SQLite, dropping it rewrites the table once.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function columnsOnlyInBody(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('merit_cycle_employees').dropColumn('columns').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('merit_cycle_employees')
        .addColumn('columns', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      const fromBody =
        dialect === 'postgres'
          ? sql`(body::json -> 'columns')::text`
          : sql`json_extract(body, '$.columns')`;
      await sql`update merit_cycle_employees set columns = ${fromBody}`.execute(db);
    },
  };
}
