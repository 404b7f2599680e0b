// The transactional outbox: an event is written in the transaction of the change it tells
// of, with one pending delivery per endpoint that listens, so that no commit goes without
// its event and no event without its commit. The dispatchers send them after the commit.
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { newId } from '../ids.js';
import type { EventData, EventType } from './events.js';

/** The import's transaction, or any other the change is written in. */
type Tx = Kysely<Database>;

/** What an import did to one merit cycle (src/import/merge.ts collects these). */
export interface CycleChange {
  meritCycleId: string;
  cycle: 'created' | 'updated' | 'unchanged';
  /** Employee counts, when the import listed the cycle's employees. */
  employees?: { created: number; updated: number; removed: number };
}

interface Listener {
  id: string;
  events: readonly string[];
}

async function listenersOf(trx: Tx, organizationId: string): Promise<Listener[]> {
  const rows = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events'])
    .where('organization_id', '=', organizationId)
    .where('status', '!=', 'disabled')
    .execute();
  return rows.map((row) => ({ id: row.id, events: JSON.parse(row.events) as string[] }));
}

/** One event and its deliveries to `endpoints`; nothing when none listens. */
async function insertEvent<T extends EventType>(
  trx: Tx,
  organizationId: string,
  type: T,
  data: EventData[T],
  endpointIds: readonly string[],
  now: string,
): Promise<void> {
  if (endpointIds.length === 0) return;
  const eventId = newId('evt');
  await trx
    .insertInto('webhook_events')
    .values({
      id: eventId,
      organization_id: organizationId,
      type,
      payload: JSON.stringify(data),
      created_at: now,
    })
    .execute();
  await trx
    .insertInto('webhook_deliveries')
    .values(
      endpointIds.map((endpointId) => ({
        id: newId('msg'),
        event_id: eventId,
        endpoint_id: endpointId,
        state: 'pending' as const,
        next_attempt_at: now,
        created_at: now,
      })),
    )
    .execute();
}

async function recordEvents(
  trx: Tx,
  organizationId: string,
  events: readonly { [T in EventType]: { type: T; data: EventData[T] } }[EventType][],
  now: string,
): Promise<void> {
  if (events.length === 0) return;
  const listeners = await listenersOf(trx, organizationId);
  for (const { type, data } of events) {
    const ids = listeners.filter((l) => l.events.includes(type)).map((l) => l.id);
    await insertEvent(trx, organizationId, type, data, ids, now);
  }
}

/**
 * The events of one import, in its transaction: per merit cycle it created or changed,
 * `meritCycle.created` or `meritCycle.updated`, and `meritCycle.employees.changed` with
 * the counts when any employee was created, changed or removed. Unchanged: nothing.
 */
export async function recordImportEvents(
  trx: Tx,
  organizationId: string,
  changes: readonly CycleChange[],
  now: string = new Date().toISOString(),
): Promise<void> {
  const events = changes.flatMap(({ meritCycleId, cycle, employees }) => [
    ...(cycle === 'unchanged'
      ? []
      : [{ type: `meritCycle.${cycle}` as const, data: { meritCycleId } }]),
    ...(employees && employees.created + employees.updated + employees.removed > 0
      ? [
          {
            type: 'meritCycle.employees.changed' as const,
            data: {
              meritCycleId,
              created: employees.created,
              updated: employees.updated,
              removed: employees.removed,
            },
          },
        ]
      : []),
  ]);
  await recordEvents(trx, organizationId, events, now);
}

/** `meritCycle.removed`, in the transaction that removes the cycle. */
export async function recordMeritCycleRemoved(
  trx: Tx,
  organizationId: string,
  meritCycleId: string,
  now: string = new Date().toISOString(),
): Promise<void> {
  await recordEvents(
    trx,
    organizationId,
    [{ type: 'meritCycle.removed', data: { meritCycleId } }],
    now,
  );
}

/** A `ping` to one endpoint only (webhooks test, the web page's Send test). */
export async function recordPing(
  trx: Tx,
  organizationId: string,
  endpointId: string,
  now: string = new Date().toISOString(),
): Promise<void> {
  await insertEvent(trx, organizationId, 'ping', { endpointId }, [endpointId], now);
}
