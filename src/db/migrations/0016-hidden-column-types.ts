// Hidden column types (docs/api-keys.md, "Least privilege"): a key may hide every column of
// some types (`currency`, `number`), now and in later imports. The types live on the key's
// row like the rest of its scope (migration 0009), and the keys-revision trigger watches
// them, so that a change reaches every instance.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

// The columns the keys-revision trigger watches after migrations 0007, 0009 and 0012.
const WATCHED_BEFORE =
  'revoked_at, secret_hash, organization_id, ' +
  'cycle_scope, hidden_columns, expires_at, previous_secret_hash, previous_secret_expires_at, ' +
  'allowed_addresses';

export function hiddenColumnTypes(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // JSON array of column types, sorted; null: no type hidden.
      await db.schema.alterTable('api_keys').addColumn('hidden_column_types', 'text').execute();
      await watchKeyColumns(db, dialect, `${WATCHED_BEFORE}, hidden_column_types`);
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await watchKeyColumns(db, dialect, WATCHED_BEFORE);
      await db.schema.alterTable('api_keys').dropColumn('hidden_column_types').execute();
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
