// The audit log (docs/security.md, "Audit log"): who read what and who changed what, one
// row an entry. Request entries arrive in batches from every instance (src/audit/writer.ts);
// management actions are written in the transaction of the action. The id orders entries
// written at the same millisecond; several instances on PostgreSQL share its sequence.
//
// No foreign key to the organisation or the key: an entry outlives a key, and checking
// one on every batched row is work the log's writers do not need.
//
// A key's address allowlist lives on its row like the rest of its scope (migration 0009),
// and the keys-revision trigger watches it, so that a change reaches every instance.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

// The columns the keys-revision trigger watches after migrations 0007 and 0009.
const WATCHED_BEFORE =
  'revoked_at, secret_hash, organization_id, ' +
  'cycle_scope, hidden_columns, expires_at, previous_secret_hash, previous_secret_expires_at';

export function auditLog(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('audit_entries')
        // SQLite: the rowid (numbered from the largest one in use; no AUTOINCREMENT table).
        .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
        .addColumn('at', timestamp, (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        // 'api.request', or the management action (src/audit/entry.ts).
        .addColumn('action', 'text', (c) => c.notNull())
        // 'cli', or the user's email; user_id for a user.
        .addColumn('actor', 'text')
        .addColumn('user_id', 'text')
        .addColumn('key_id', 'text')
        // What an action was done to (a key, a user, a webhook endpoint, a merit cycle).
        .addColumn('target', 'text')
        // A request's method, route pattern, path (no query), merit cycle, status, employees
        // served, client address, user agent and request id.
        .addColumn('method', 'text')
        .addColumn('route', 'text')
        .addColumn('path', 'text')
        .addColumn('merit_cycle_id', 'text')
        .addColumn('status', 'integer')
        .addColumn('employees', 'integer')
        .addColumn('client_address', 'text')
        .addColumn('user_agent', 'text')
        .addColumn('request_id', 'text')
        // An action's details as JSON text (an import's counts, a setting's new value).
        .addColumn('details', 'text')
        .execute();
      await db.schema
        .createIndex('audit_entries_by_organization')
        .on('audit_entries')
        .columns(['organization_id', 'at', 'id'])
        .execute();
      await db.schema
        .createIndex('audit_entries_by_key')
        .on('audit_entries')
        .columns(['organization_id', 'key_id', 'at', 'id'])
        .execute();
      // The purge of old entries, across organisations.
      await db.schema
        .createIndex('audit_entries_by_time')
        .on('audit_entries')
        .column('at')
        .execute();

      // JSON array of CIDR ranges the key may be used from; null: any address.
      await db.schema.alterTable('api_keys').addColumn('allowed_addresses', 'text').execute();
      await watchKeyColumns(db, dialect, `${WATCHED_BEFORE}, allowed_addresses`);
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await watchKeyColumns(db, dialect, WATCHED_BEFORE);
      await db.schema.alterTable('api_keys').dropColumn('allowed_addresses').execute();
      await db.schema.dropTable('audit_entries').execute();
    },
  };
}

// The keys-revision trigger of migration 0007, recreated to watch `columns` (0007's
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
