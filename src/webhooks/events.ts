// The events an organisation's endpoints can receive (decisions.md section 5), and what
// each one's `data` holds. Payloads are thin: they say what changed; the receiver then
// reads it through the API (delta sync).

/** Event types an endpoint subscribes to; `ping` (webhooks test) reaches it whatever it chose. */
export const EVENT_TYPES = [
  'meritCycle.created',
  'meritCycle.updated',
  'meritCycle.removed',
  'meritCycle.employees.changed',
] as const;

export type SubscribableEventType = (typeof EVENT_TYPES)[number];
export type EventType = SubscribableEventType | 'ping';

export interface EventData {
  'meritCycle.created': { meritCycleId: string };
  'meritCycle.updated': { meritCycleId: string };
  'meritCycle.removed': { meritCycleId: string };
  'meritCycle.employees.changed': {
    meritCycleId: string;
    created: number;
    updated: number;
    removed: number;
  };
  ping: { endpointId: string };
}

/** The body of every request: `{ type, timestamp, data }`. */
export interface WebhookPayload<T extends EventType = EventType> {
  type: T;
  /** When the event was recorded (ISO 8601 UTC); every retry carries the same. */
  timestamp: string;
  data: EventData[T];
}

export function isSubscribableEventType(text: string): text is SubscribableEventType {
  return (EVENT_TYPES as readonly string[]).includes(text);
}
