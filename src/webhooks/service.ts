// Endpoint management: what `compplan webhooks …` and the web application's Settings →
// Connections → Webhooks do. The signing secret exists in clear only in memory, until it
// is returned once; a refused request writes nothing.
import { type Actor, CLI_ACTOR } from '../audit/entry.js';
import { withRecordedAction } from '../audit/repository.js';
import type { Db } from '../db/connect.js';
import { ManagementError } from '../errors.js';
import { newId } from '../ids.js';
import { seal } from '../sealed-text.js';
import { findOrganizationById, findOrganizationBySlug } from '../tenancy/organizations.js';
import { checkEndpointUrl, RefusedAddressError } from './address-filter.js';
import { EVENT_TYPES, isSubscribableEventType } from './events.js';
import { recordPing } from './outbox.js';
import {
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  organizationOfWebhookEndpoint,
  recentWebhookDeliveries,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './repository.js';
import { generateSigningSecret, readSealingKey } from './secret.js';

/** A management request that is refused: one line, and nothing was changed. */
export class WebhookManagementError extends ManagementError {
  override name = 'WebhookManagementError';
}

export interface AddedWebhookEndpoint {
  id: string;
  org: string;
  url: string;
  events: string[];
  /** The whsec_ signing secret: returned this once, kept only sealed. */
  secret: string;
  createdAt: string;
}

export interface NewEndpointInput {
  org: string;
  url: string;
  /** Event types; undefined: every type. */
  events?: readonly string[] | undefined;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: readonly string[];
}

async function organizationOrFail(db: Db, slug: string) {
  const organization = await findOrganizationBySlug(db, slug);
  if (!organization) throw new WebhookManagementError(`No organisation with slug "${slug}"`);
  return organization;
}

/** The event types asked for, checked; none given: every type. */
function eventTypesOf(events: readonly string[] | undefined): string[] {
  if (events === undefined) return [...EVENT_TYPES];
  const unknown = events.filter((type) => !isSubscribableEventType(type));
  if (unknown.length > 0) {
    throw new WebhookManagementError(
      `Unknown event type${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: choose from ${EVENT_TYPES.join(', ')}`,
    );
  }
  if (events.length === 0) throw new WebhookManagementError('Choose at least one event type');
  return EVENT_TYPES.filter((type) => events.includes(type));
}

export async function addWebhookEndpoint(
  db: Db,
  input: NewEndpointInput,
  now: Date = new Date(),
  actor: Actor = CLI_ACTOR,
): Promise<AddedWebhookEndpoint> {
  const organization = await organizationOrFail(db, input.org);
  let url: string;
  try {
    url = checkEndpointUrl(input.url.trim(), input.allowPrivateNetworks);
  } catch (error) {
    if (error instanceof RefusedAddressError) throw new WebhookManagementError(error.message);
    throw error;
  }
  const events = eventTypesOf(input.events);
  const secret = generateSigningSecret();
  const endpoint = {
    id: newId('wh'),
    organizationId: organization.id,
    url,
    events,
    sealedSecret: seal(await readSealingKey(db), secret),
    createdAt: now.toISOString(),
  };
  // The URL is the organisation's own setting; the secret never goes in the log.
  await withRecordedAction(
    db,
    (trx) => insertWebhookEndpoint(trx, endpoint),
    () => ({
      organizationId: organization.id,
      action: 'webhook.added',
      actor,
      target: endpoint.id,
      details: { url, events },
      at: now,
    }),
  );
  return {
    id: endpoint.id,
    org: organization.slug,
    url,
    events,
    secret,
    createdAt: endpoint.createdAt,
  };
}

export interface ListedWebhookEndpoint extends WebhookEndpoint {
  /** The most recent deliveries, newest first. */
  deliveries: WebhookDelivery[];
}

export async function listOrganizationWebhooks(
  db: Db,
  org: string,
  deliveriesEach = 5,
): Promise<ListedWebhookEndpoint[]> {
  const organization = await organizationOrFail(db, org);
  const endpoints = await listWebhookEndpoints(db, organization.id);
  return Promise.all(
    endpoints.map(async (endpoint) => ({
      ...endpoint,
      deliveries: await recentWebhookDeliveries(db, organization.id, endpoint.id, deliveriesEach),
    })),
  );
}

/**
 * Records a `ping` for an endpoint of the organisation: the next dispatcher round sends
 * it. Undefined when the organisation has no such endpoint; refused for a disabled one.
 */
export async function testWebhookEndpoint(
  db: Db,
  organizationId: string,
  id: string,
): Promise<WebhookEndpoint | undefined> {
  const endpoint = await findWebhookEndpoint(db, organizationId, id);
  if (endpoint?.status === 'disabled') {
    throw new WebhookManagementError(
      `Webhook endpoint ${id} is disabled (it answered 410 Gone): remove it and add it again`,
    );
  }
  if (endpoint) await db.transaction().execute((trx) => recordPing(trx, organizationId, id));
  return endpoint;
}

/**
 * Removes an endpoint of the organisation, and with it its deliveries still pending.
 * Undefined when the organisation has no such endpoint.
 */
export async function removeWebhookEndpoint(
  db: Db,
  organizationId: string,
  id: string,
  actor: Actor = CLI_ACTOR,
): Promise<WebhookEndpoint | undefined> {
  const endpoint = await findWebhookEndpoint(db, organizationId, id);
  if (endpoint) {
    await withRecordedAction(
      db,
      (trx) => deleteWebhookEndpoint(trx, organizationId, id),
      (deleted) =>
        deleted
          ? {
              organizationId,
              action: 'webhook.removed',
              actor,
              target: id,
              details: { url: endpoint.url },
            }
          : undefined,
    );
  }
  return endpoint;
}

/** `action` on an endpoint named by its id alone (the command line), in its organisation. */
async function inOrganizationOf(
  db: Db,
  id: string,
  action: (organizationId: string) => Promise<WebhookEndpoint | undefined>,
): Promise<WebhookEndpoint & { org: string }> {
  const organizationId = await organizationOfWebhookEndpoint(db, id);
  const organization = organizationId && (await findOrganizationById(db, organizationId));
  const endpoint = organization && (await action(organization.id));
  if (!organization || !endpoint) throw new WebhookManagementError(`No webhook endpoint ${id}`);
  return { ...endpoint, org: organization.slug };
}

export const removeWebhookEndpointById = (db: Db, id: string) =>
  inOrganizationOf(db, id, (organizationId) => removeWebhookEndpoint(db, organizationId, id));

export const testWebhookEndpointById = (db: Db, id: string) =>
  inOrganizationOf(db, id, (organizationId) => testWebhookEndpoint(db, organizationId, id));
