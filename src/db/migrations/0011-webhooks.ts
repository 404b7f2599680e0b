// Webhooks (docs/webhooks.md): an organisation's endpoints, the outbox of events an
// import records in its own transaction, and one delivery row per event and endpoint,
// which the dispatchers of every instance claim with a lease (src/webhooks/dispatcher.ts).
//
// The signing secret cannot be kept as a hash (it signs), so it is stored sealed
// (AES-256-GCM) under a server secret this migration makes, in the table that already
// keeps the cursor-signing key: a copy of the endpoints table, a log of its rows or a
// partial backup shows no usable secret. docs/webhooks.md says what this does not cover.
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export const WEBHOOK_SECRET_KEY = 'webhook-secret-sealing-key';

export function webhooksSchema(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) =>
          c.notNull().references('organizations.id').onDelete('cascade'),
        )
        .addColumn('url', 'text', (c) => c.notNull())
        // JSON array of the event types sent to it (ping always is).
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('sealed_secret', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('active', 'failing', 'disabled')`),
        )
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_endpoints_by_organization')
        .on('webhook_endpoints')
        .columns(['organization_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('webhook_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) =>
          c.notNull().references('organizations.id').onDelete('cascade'),
        )
        .addColumn('type', 'text', (c) => c.notNull())
        // The event's `data`, as JSON text.
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('webhook_deliveries')
        // The webhook-id header: the same on every attempt, so receivers can deduplicate.
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) =>
          c.notNull().references('webhook_events.id').onDelete('cascade'),
        )
        .addColumn('endpoint_id', 'text', (c) =>
          c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
        )
        .addColumn('state', 'text', (c) =>
          c.notNull().check(sql`state in ('pending', 'delivered', 'failed', 'cancelled')`),
        )
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', timestamp, (c) => c.notNull())
        // The instance attempting it, until when; another may take it over after that.
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', timestamp)
        .addColumn('last_attempt_at', timestamp)
        // The HTTP status of the last answer; null: none (refused address, timeout, …).
        .addColumn('last_status', 'integer')
        // What went wrong, or the first characters of the answer's body.
        .addColumn('last_response', 'text')
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute();
      // The dispatchers' claim: pending deliveries in the order they fall due.
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .columns(['state', 'next_attempt_at'])
        .execute();
      // The last deliveries of an endpoint (webhooks list, the web page).
      await db.schema
        .createIndex('webhook_deliveries_by_endpoint')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'created_at'])
        .execute();

      await db
        .insertInto('server_secrets' as never)
        .values({
          name: WEBHOOK_SECRET_KEY,
          value: randomBytes(32).toString('base64url'),
          created_at: new Date().toISOString(),
        } as never)
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db
        .deleteFrom('server_secrets' as never)
        .where('name' as never, '=', WEBHOOK_SECRET_KEY as never)
        .execute();
      for (const table of ['webhook_deliveries', 'webhook_events', 'webhook_endpoints']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
