// What the web application's management pages show (docs/web-app.md): Settings → Users,
// when each user last signed in (kept on the user: sessions end and are deleted).
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connect.js';

export function webManagement(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').addColumn('last_signed_in_at', timestamp).execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('users').dropColumn('last_signed_in_at').execute();
    },
  };
}
