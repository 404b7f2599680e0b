// The OpenAPI document's `webhooks` (OpenAPI 3.1): the requests compplan sends to an
// endpoint, one per event type, with the payload schemas of events.ts and the Standard
// Webhooks headers. docs/webhooks.md tells the rest (retries, verifying, safety).
import type { OpenAPIV3_1 } from 'openapi-types';
import { z } from 'zod';
import { EVENT_DATA, EVENT_DESCRIPTIONS, type EventType, payloadSchema } from './events.js';

export const WEBHOOKS_TAG = {
  name: 'Webhooks',
  description:
    'Requests compplan sends to the endpoints an organisation added (`compplan webhooks add`), signed per Standard Webhooks 1.0. See docs/webhooks.md.',
};

const header = (name: string, description: string): OpenAPIV3_1.ParameterObject => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
});

const HEADERS = [
  header('webhook-id', 'The delivery (msg_…): the same on every retry of it; deduplicate by it.'),
  header('webhook-timestamp', 'When this attempt was signed, in seconds since the epoch.'),
  header(
    'webhook-signature',
    '`v1,` and the base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body`, keyed with the endpoint secret (after `whsec_`, base64-decoded).',
  ),
];

const EXAMPLES: { [T in EventType]: z.infer<(typeof EVENT_DATA)[T]> } = {
  'meritCycle.created': { meritCycleId: 'mc_10000000-0000-4000-8000-000000000001' },
  'meritCycle.updated': { meritCycleId: 'mc_10000000-0000-4000-8000-000000000001' },
  'meritCycle.removed': { meritCycleId: 'mc_10000000-0000-4000-8000-000000000001' },
  'meritCycle.employees.changed': {
    meritCycleId: 'mc_10000000-0000-4000-8000-000000000001',
    created: 12,
    updated: 3,
    removed: 0,
  },
  ping: { endpointId: 'wh_10000000-0000-4000-8000-000000000001' },
};

const operationId = (type: string) =>
  `webhook${type
    .split('.')
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join('')}`;

export function webhooksDocument(): Record<string, { post: OpenAPIV3_1.OperationObject }> {
  return Object.fromEntries(
    (Object.keys(EVENT_DATA) as EventType[]).map((type) => {
      const { $schema: _, ...schema } = z.toJSONSchema(payloadSchema(type)) as Record<
        string,
        unknown
      >;
      const operation: OpenAPIV3_1.OperationObject = {
        operationId: operationId(type),
        summary: `${type} event`,
        description: EVENT_DESCRIPTIONS[type],
        tags: [WEBHOOKS_TAG.name],
        security: [],
        parameters: HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: schema as OpenAPIV3_1.SchemaObject,
              example: { type, timestamp: '2026-11-26T09:30:00.000Z', data: EXAMPLES[type] },
            },
          },
        },
        responses: {
          '200': {
            description:
              'Received: any 2xx answer within 10 s. Any other answer, or none, is retried (5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h, about three days in all); 410 disables the endpoint.',
          },
        },
      };
      return [type, { post: operation }];
    }),
  );
}
