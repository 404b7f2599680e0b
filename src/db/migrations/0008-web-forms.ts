// POST/redirect/GET in the web application (docs/web-app.md): what a page shows once after
// a form post (a new key's secret), sealed, between the POST and the GET its redirect
// leads to; and the forms a session has sent, so that the same form sent again (a reload
// of its answer, Back and resend, a double click) does nothing.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function webForms(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Sealed with a key derived from the session id, which only the browser holds
      // (src/sessions/one-time-view.ts): never the secret in clear.
      await db.schema.alterTable('sessions').addColumn('one_time_view', 'text').execute();
      await db.schema
        .createTable('session_forms')
        .addColumn('session_id_hash', 'text', (c) =>
          c.notNull().references('sessions.id_hash').onDelete('cascade'),
        )
        // The random id of one rendered form (its hidden _form field).
        .addColumn('form_id', 'text', (c) => c.notNull())
        .addColumn('sent_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('session_forms_pkey', ['session_id_hash', 'form_id'])
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('session_forms').execute();
      await db.schema.alterTable('sessions').dropColumn('one_time_view').execute();
    },
  };
}
