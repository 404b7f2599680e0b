// The events an organisation's endpoints can receive (docs/webhooks.md, "Events"), and what
// each one's `data` holds: one zod schema per payload types the outbox and documents the
// payload under the OpenAPI document's `webhooks` (openapi.ts). Payloads are thin: they
// say what changed; the receiver then reads it through the API (delta sync).
import { z } from 'zod';

const meritCycleId = z.string().describe('The merit cycle (mc_…).');

const count = (what: string) => z.number().int().min(0).describe(what);

/** `data` of each event type. */
export const EVENT_DATA = {
  'meritCycle.created': z.object({ meritCycleId }),
  'meritCycle.updated': z.object({ meritCycleId }),
  'meritCycle.removed': z.object({ meritCycleId }),
  'meritCycle.employees.changed': z.object({
    meritCycleId,
    created: count('Employees the import added to the cycle.'),
    updated: count('Employees whose data the import changed.'),
    removed: count('Employees the import removed (import --prune).'),
  }),
  ping: z.object({ endpointId: z.string().describe('The endpoint pinged (wh_…).') }),
} as const;

export type EventType = keyof typeof EVENT_DATA;
export type EventData = { [T in EventType]: z.infer<(typeof EVENT_DATA)[T]> };

/** Event types an endpoint subscribes to; `ping` (webhooks test) reaches it whatever it chose. */
export const EVENT_TYPES = [
  'meritCycle.created',
  'meritCycle.updated',
  'meritCycle.removed',
  'meritCycle.employees.changed',
] as const satisfies readonly EventType[];

type SubscribableEventType = (typeof EVENT_TYPES)[number];

export function isSubscribableEventType(text: string): text is SubscribableEventType {
  return (EVENT_TYPES as readonly string[]).includes(text);
}

/** When each event is sent, for the documentation. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'meritCycle.created': 'An import created the merit cycle.',
  'meritCycle.updated':
    "An import changed the merit cycle's own fields (name, status, dates, currency, exchange rates).",
  'meritCycle.removed': 'The merit cycle was removed.',
  'meritCycle.employees.changed':
    'An import created, changed or removed employees of the merit cycle: one event per cycle and import, with the counts, never one per employee.',
  ping: 'Sent by `compplan webhooks test ID`, whatever event types the endpoint chose.',
};

/** The body of every request: `{ type, timestamp, data }`. */
export function payloadSchema<T extends EventType>(type: T) {
  return z.object({
    type: z.literal(type),
    timestamp: z
      .string()
      .describe('When the event was recorded (ISO 8601 UTC); the same on every retry.'),
    data: EVENT_DATA[type],
  });
}
