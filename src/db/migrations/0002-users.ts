// The web application's users and their sign-in sessions (Settings → Connections and
// Roles & Permissions are pages of the web application, not of the API).
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function usersSchema(dialect: Dialect) {
  // The same column types as 0001: ISO text / timestamptz(3), integer / boolean.
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  const flag = dialect === 'postgres' ? sql`boolean` : sql`integer`;

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('email', 'text', (c) => c.notNull())
        // Lower-cased email: sign-in finds a user by it, so it is unique in the installation.
        .addColumn('email_key', 'text', (c) => c.notNull().unique())
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin')`))
        // A versioned scrypt hash string (src/users/password.ts), never a password.
        .addColumn('password_hash', 'text', (c) => c.notNull())
        // Set while the password is the one-time password the CLI printed.
        .addColumn('must_change_password', flag, (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('password_changed_at', timestamp)
        .execute();
      await db.schema
        .createIndex('users_by_organization')
        .on('users')
        .columns(['organization_id', 'email_key'])
        .execute();

      await db.schema
        .createTable('sessions')
        // SHA-256 of the random session id the cookie carries; the id itself is not stored.
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        // The synchronizer token every form of this session must send back.
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('last_seen_at', timestamp, (c) => c.notNull())
        .addColumn('expires_at', timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_by_user').on('sessions').column('user_id').execute();
      await db.schema
        .createIndex('sessions_by_expiry')
        .on('sessions')
        .column('expires_at')
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('sessions').execute();
      await db.schema.dropTable('users').execute();
    },
  };
}
