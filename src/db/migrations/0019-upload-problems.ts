// The whole list of a refused upload's problems, as CSV (Settings → Data's problems.csv,
// src/import/uploads.ts): kept in the database so that whichever instance a person's next
// request reaches serves it, not only the one that checked the file. One row a user (their
// last refused file's list, replaced by the next), until it expires (30 minutes) or the
// user is removed.
import type { Kysely } from 'kysely';

export function uploadProblems() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('upload_problems')
        .addColumn('user_id', 'text', (c) =>
          c.primaryKey().references('users.id').onDelete('cascade'),
        )
        // row, column, value, problem (a spreadsheet) or line, record, field, problem.
        .addColumn('csv', 'text', (c) => c.notNull())
        // Milliseconds since the epoch.
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('upload_problems').execute();
    },
  };
}
