// A number that changes whenever an API key may have stopped being valid: one row, which
// triggers on api_keys bump in the same transaction as the change itself — a key revoked
// (`compplan keys revoke`, the web application, or SQL typed by hand), its secret or
// organisation changed, or the key deleted. Creating a key or recording its last use
// does not count: neither can make a cached answer about a key wrong.
//
// Each server reads this row once a second (src/api-keys/verifier.ts) instead of
// looking every key up again every few seconds: a key in use costs one database read
// when first seen, however long the pauses between its requests, and a revocation still
// reaches every instance within the 5 seconds docs/api-behaviour.md promises (within about one).
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

// The columns whose change can make a key that was valid invalid.
const WATCHED = 'revoked_at, secret_hash, organization_id';
const BUMP = 'update api_keys_revision set revision = revision + 1 where id = 1';

/**
 * (Re)creates the trigger that bumps the revision when one of `columns` of a key is
 * updated; migrations that add what a verified key carries widen the list.
 */
async function watchKeyColumns(
  db: Kysely<unknown>,
  dialect: Dialect,
  columns: string,
): Promise<void> {
  if (dialect === 'postgres') {
    await sql.raw('drop trigger if exists api_keys_changed on api_keys').execute(db);
    // One bump per statement: a statement that revokes many keys counts once.
    await sql
      .raw(`create trigger api_keys_changed after update of ${columns} or delete
        on api_keys for each statement execute function api_keys_changed()`)
      .execute(db);
  } else {
    await sql.raw('drop trigger if exists api_keys_changed').execute(db);
    // SQLite's triggers are per row.
    await sql
      .raw(`create trigger api_keys_changed after update of ${columns} on api_keys
        begin ${BUMP}; end`)
      .execute(db);
  }
}

export function apiKeysRevision(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('api_keys_revision')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('revision', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
        .execute();
      await sql`insert into api_keys_revision (id, revision) values (1, 0)`.execute(db);
      if (dialect === 'postgres') {
        await sql
          .raw(`create function api_keys_changed() returns trigger language plpgsql as $$
            begin ${BUMP}; return null; end $$`)
          .execute(db);
      } else {
        await sql
          .raw(`create trigger api_keys_deleted after delete on api_keys begin ${BUMP}; end`)
          .execute(db);
      }
      await watchKeyColumns(db, dialect, WATCHED);
    },

    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`drop trigger api_keys_changed on api_keys`.execute(db);
        await sql`drop function api_keys_changed()`.execute(db);
      } else {
        await sql`drop trigger api_keys_changed`.execute(db);
        await sql`drop trigger api_keys_deleted`.execute(db);
      }
      await db.schema.dropTable('api_keys_revision').execute();
    },
  };
}
