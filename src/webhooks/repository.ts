// Endpoints and deliveries as management (the CLI, the web application) sees them: never
// a secret, sealed or not. Every query of an organisation's endpoints takes its id. The
// join of deliveries with their event and endpoint is here too, for the dispatcher as well;
// it selects nothing itself.
import type { Db } from '../db/connect.js';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../db/types.js';
import { toIso, toIsoOrNull } from '../db/values.js';

export interface WebhookEndpoint {
  id: string;
  organizationId: string;
  url: string;
  /** The event types it receives (besides ping). */
  events: string[];
  /** `failing`: its last delivery was given up after every retry; `disabled`: it answered 410. */
  status: WebhookEndpointRow['status'];
  createdAt: string;
}

export interface WebhookDelivery {
  /** The webhook-id header. */
  id: string;
  eventType: string;
  state: WebhookDeliveryRow['state'];
  attempts: number;
  /** When it is tried next (pending only). */
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatus: number | null;
  /** What went wrong, or the first characters of the answer. */
  lastResponse: string | null;
  createdAt: string;
}

function toWebhookEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    organizationId: row.organization_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    status: row.status,
    createdAt: toIso(row.created_at),
  };
}

const ENDPOINT_COLUMNS = [
  'id',
  'organization_id',
  'url',
  'events',
  'status',
  'created_at',
] as const;

export interface NewWebhookEndpoint {
  id: string;
  organizationId: string;
  url: string;
  events: readonly string[];
  sealedSecret: string;
  createdAt: string;
}

export async function insertWebhookEndpoint(db: Db, endpoint: NewWebhookEndpoint): Promise<void> {
  await db
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      organization_id: endpoint.organizationId,
      url: endpoint.url,
      events: JSON.stringify(endpoint.events),
      sealed_secret: endpoint.sealedSecret,
      status: 'active',
      created_at: endpoint.createdAt,
    })
    .execute();
}

export async function listWebhookEndpoints(
  db: Db,
  organizationId: string,
): Promise<WebhookEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => toWebhookEndpoint(row as WebhookEndpointRow));
}

export async function findWebhookEndpoint(
  db: Db,
  organizationId: string,
  id: string,
): Promise<WebhookEndpoint | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && toWebhookEndpoint(row as WebhookEndpointRow);
}

/** The organisation an endpoint belongs to: how `webhooks remove ID` finds its scope. */
export async function organizationOfWebhookEndpoint(
  db: Db,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select('organization_id')
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.organization_id;
}

/** Removes the endpoint and its deliveries (cascade); whether there was one. */
export async function deleteWebhookEndpoint(
  db: Db,
  organizationId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Deliveries with their event (`e`) and endpoint (`w`): the one join that both the
 * dispatcher (what to send, and where) and the pages (an endpoint's last deliveries) read
 * through. It selects nothing; each reader names its own columns.
 */
export function deliveriesWithEventAndEndpoint(db: Db) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id');
}

/** An endpoint's most recent deliveries, newest first. */
export async function recentWebhookDeliveries(
  db: Db,
  organizationId: string,
  endpointId: string,
  limit = 10,
): Promise<WebhookDelivery[]> {
  const rows = await deliveriesWithEventAndEndpoint(db)
    .select([
      'd.id',
      'e.type',
      'd.state',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.last_status',
      'd.last_response',
      'd.created_at',
    ])
    .where('w.organization_id', '=', organizationId)
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    eventType: row.type,
    state: row.state,
    attempts: Number(row.attempts),
    nextAttemptAt: row.state === 'pending' ? toIso(row.next_attempt_at) : null,
    lastAttemptAt: toIsoOrNull(row.last_attempt_at),
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastResponse: row.last_response,
    createdAt: toIso(row.created_at),
  }));
}
