// The web application's upload slots (src/import/uploads.ts): one upload (or import) at a
// time per organisation, on every instance. A slot is a lease: the instance that holds it
// renews it while the upload runs and deletes it when the upload ends, however it ends; a
// slot whose instance stopped renewing (killed, or cut off from the database) is free once
// its lease expires, and at once for an instance on the same host whose process is gone.
// The progress the Data page shows is kept on the slot, so that every instance shows it.
import type { Kysely } from 'kysely';

type Dialect = 'sqlite' | 'postgres';

export function uploadSlots(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('upload_slots')
        .addColumn('organization_id', 'text', (c) =>
          c.primaryKey().references('organizations.id').onDelete('cascade'),
        )
        // The holder: a random id per server process, its host name and process id.
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('host', 'text', (c) => c.notNull())
        .addColumn('pid', 'integer', (c) => c.notNull())
        // receiving | checking | importing; bytes done of total (null: not known).
        .addColumn('phase', 'text', (c) => c.notNull())
        .addColumn('done', 'bigint', (c) => c.notNull())
        .addColumn('total', 'bigint')
        // The user's email.
        .addColumn('started_by', 'text', (c) => c.notNull())
        // Milliseconds since the epoch.
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('upload_slots').execute();
    },
  };
}
