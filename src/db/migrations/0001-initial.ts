// The initial schema. Every list page is one range scan of an index whose leading
// column is the organisation, in the order the API pages in.
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function initialSchema(dialect: Dialect) {
  // Timestamps: ISO text in SQLite (which sorts correctly as text, since every value is
  // written in one UTC format), timestamptz with milliseconds in PostgreSQL.
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  const flag = dialect === 'postgres' ? sql`boolean` : sql`integer`;
  // Strings that the API sorts by compare by code point on both databases: SQLite's
  // BINARY collation already does (UTF-8 byte order), PostgreSQL needs COLLATE "C".
  const sortText = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('api_keys_enabled', flag, (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('last_used_at', timestamp)
        .addColumn('revoked_at', timestamp)
        .execute();
      await db.schema
        .createIndex('api_keys_by_organization')
        .on('api_keys')
        .columns(['organization_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('merit_cycles')
        .addColumn('id', sortText, (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('active', 'inactive', 'finalized')`),
        )
        .addColumn('start_date', timestamp, (c) => c.notNull())
        .addColumn('end_date', timestamp, (c) => c.notNull())
        .addColumn('created_date', timestamp, (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('exchange_rates', 'text', (c) => c.notNull())
        .addUniqueConstraint('merit_cycles_name_unique', ['organization_id', 'name'])
        .execute();
      // Newest first, ties by id: the list order. The status index serves the filter.
      await db.schema
        .createIndex('merit_cycles_page')
        .on('merit_cycles')
        .expression(sql`organization_id, created_date desc, id`)
        .execute();
      await db.schema
        .createIndex('merit_cycles_page_by_status')
        .on('merit_cycles')
        .expression(sql`organization_id, status, created_date desc, id`)
        .execute();

      await db.schema
        .createTable('merit_cycle_employees')
        .addColumn('id', sortText, (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('merit_cycle_id', 'text', (c) =>
          c.notNull().references('merit_cycles.id').onDelete('cascade'),
        )
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('email_key', 'text', (c) => c.notNull())
        .addColumn('first_name', sortText, (c) => c.notNull())
        .addColumn('last_name', sortText, (c) => c.notNull())
        .addColumn('preferred_name', 'text')
        .addColumn('currency_code', 'text', (c) => c.notNull())
        .addColumn('currency_name', 'text', (c) => c.notNull())
        .addColumn('eligibility_status', 'text', (c) =>
          c.notNull().check(sql`eligibility_status in ('eligible', 'ineligible')`),
        )
        .addColumn('columns', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addUniqueConstraint('merit_cycle_employees_email_unique', ['merit_cycle_id', 'email_key'])
        .execute();
      // The employees list order (lastName, firstName, id) within one cycle of one organisation.
      await db.schema
        .createIndex('merit_cycle_employees_page')
        .on('merit_cycle_employees')
        .columns(['organization_id', 'merit_cycle_id', 'last_name', 'first_name', 'id'])
        .execute();

      await db.schema
        .createTable('server_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute();
      // Signs pagination cursors. Kept in the database so that every instance of a
      // deployment verifies the cursors of every other without extra configuration.
      await db
        .insertInto('server_secrets' as never)
        .values({
          name: 'cursor-signing-key',
          value: randomBytes(32).toString('base64url'),
          created_at: new Date().toISOString(),
        } as never)
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of [
        'server_secrets',
        'merit_cycle_employees',
        'merit_cycles',
        'api_keys',
        'organizations',
      ]) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
