// Least-privilege keys (docs/api-keys.md, "Least privilege"): what a key may read, until
// when, and a second secret that stays valid for a grace period after the key is rolled.
//
// The scope lives on the key's row, as JSON text, not in a child table: the verifier reads
// a key once when it first sees it and then keeps it, so everything a request needs —
// organisation, cycles, hidden columns, expiry — comes from one row by one index lookup.
// The cycle ids are checked against the organisation's cycles when the key is made; a
// cycle removed later is simply one that does not exist for the key too.
//
// Every new column but the last-use address can change what a kept key answer says, so
// the keys-revision trigger of migration 0007 watches them too: a roll, or an edit by
// hand, reaches every instance within about a second. Expiry needs no event: the verifier
// compares it with the clock on every request.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

// The columns migration 0007's trigger watches, and those this one adds to them.
const WATCHED = 'revoked_at, secret_hash, organization_id';
const ADDED_WATCHED =
  'cycle_scope, hidden_columns, expires_at, previous_secret_hash, previous_secret_expires_at';

export function leastPrivilegeKeys(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const columns: [string, ReturnType<typeof sql>][] = [
        // JSON array of merit cycle ids; null: every cycle of the organisation.
        ['cycle_scope', sql`text`],
        // JSON array of column keys removed from every employee the key reads; null: none.
        ['hidden_columns', sql`text`],
        ['expires_at', timestamp],
        // The secret before the last roll, and when it stops working.
        ['previous_secret_hash', sql`text`],
        ['previous_secret_expires_at', timestamp],
        // The client address (as TRUST_PROXY resolves it) of the last use.
        ['last_used_address', sql`text`],
      ];
      for (const [name, type] of columns) {
        await db.schema.alterTable('api_keys').addColumn(name, type).execute();
      }
      await db.schema
        .createIndex('api_keys_previous_secret')
        .unique()
        .on('api_keys')
        .column('previous_secret_hash')
        .execute();
      await watchKeyColumns(db, dialect, `${WATCHED}, ${ADDED_WATCHED}`);
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await watchKeyColumns(db, dialect, WATCHED);
      await db.schema.dropIndex('api_keys_previous_secret').execute();
      for (const name of [
        'last_used_address',
        'previous_secret_expires_at',
        'previous_secret_hash',
        'expires_at',
        'hidden_columns',
        'cycle_scope',
      ]) {
        await db.schema.alterTable('api_keys').dropColumn(name).execute();
      }
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
