// Delivery by the dispatcher of a server started as `compplan serve` starts it (buildApp
// with deliverWebhooks), over the real database, to real receivers on loopback that
// verify every signature with the standardwebhooks library. The dispatcher is given the
// retry schedule scaled down (scaledSchedule), so five minutes take a fraction of a second,
// and looks for work every 50 ms instead of every second: the imports here are loaded as
// `compplan import` loads them, beside the server, which finds their events by polling.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CHANGE_RETENTION_DAYS, type WebhookConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { removeMeritCycle } from '../../src/modules/merit-cycles/removal.js';
import { recordPing } from '../../src/webhooks/outbox.js';
import { addWebhookEndpoint } from '../../src/webhooks/service.js';
import { createTestDatabase } from '../helpers/databases.js';
import { scaledSchedule, startTestServer, type TestServer } from '../helpers/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const ORG = 'hooked';
const CYCLE_A = 'mc_30000000-0000-4000-8000-00000000000a';
const CYCLE_B = 'mc_30000000-0000-4000-8000-00000000000b';
const LOOPBACK: WebhookConfig = { allowPrivateNetworks: ['127.0.0.0/8'] };
const POLL_MS = 50;
const FAST = scaledSchedule(0.001, POLL_MS);

function employee(n: number, title = 'Engineer') {
  return {
    id: `mce_30000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    email: `person${n}@hooked.example`,
    firstName: `First${n}`,
    lastName: `Last${n}`,
    currencyCode: 'USD',
    eligibilityStatus: 'eligible' as const,
    columns: { title: { name: 'Title', type: 'text', value: title } },
  };
}

function dataSet(options: { employeesOfA?: number[]; titleOf3?: string; statusOfB?: string } = {}) {
  const employeesOfA = options.employeesOfA ?? [1, 2, 3];
  return {
    organization: { slug: ORG, name: 'Hooked Inc', apiKeysEnabled: true },
    meritCycles: [
      {
        id: CYCLE_A,
        name: 'Annual',
        status: 'active',
        startDate: '2026-01-01T00:00:00.000Z',
        endDate: '2026-03-31T00:00:00.000Z',
        currency: 'USD',
        employees: employeesOfA.map((n) => employee(n, n === 3 ? options.titleOf3 : undefined)),
      },
      {
        id: CYCLE_B,
        name: 'Mid-year',
        status: options.statusOfB ?? 'inactive',
        startDate: '2026-06-01T00:00:00.000Z',
        endDate: '2026-07-31T00:00:00.000Z',
        currency: 'USD',
      },
    ],
  } as DataSetInput;
}

async function addEndpoint(
  server: TestServer,
  receiver: WebhookReceiver,
  allowance: readonly string[] = ['127.0.0.0/8'],
  url = receiver.url,
) {
  const added = await addWebhookEndpoint(server.database.db, {
    org: ORG,
    url,
    allowPrivateNetworks: allowance,
  });
  receiver.secret = added.secret;
  return added;
}

async function deliveries(server: TestServer) {
  return server.database.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'e.type', 'd.state', 'd.attempts', 'd.last_status', 'd.last_response'])
    .orderBy('d.created_at')
    .orderBy('e.type')
    .execute();
}

async function endpointStatus(server: TestServer, id: string) {
  const row = await server.database.db
    .selectFrom('webhook_endpoints')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.status;
}

/** Waits (polling the database, never a fixed sleep) until `check` holds. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) throw new Error(`not reached in ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhook delivery after imports', () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    server = await startTestServer({
      webhooks: LOOPBACK,
      webhookSchedule: FAST,
      dataSets: [dataSet()],
    });
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    await server.close();
  });

  it('an import that changes a cycle sends one verified event per change and cycle; the same import again sends none', async () => {
    await addEndpoint(server, receiver);
    // Employee 3 changes, 4 is new, the cycle B's status changes; A itself does not.
    await server.load(
      dataSet({ employeesOfA: [1, 2, 3, 4], titleOf3: 'Lead', statusOfB: 'active' }),
    );
    const received = await receiver.waitFor(2);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(received.flatMap((r) => r.violations)).toEqual([]);
    const bodies = received.map((r) => r.body).sort((a, b) => a.type.localeCompare(b.type));
    expect(bodies.map(({ type, data }) => ({ type, data }))).toEqual([
      {
        type: 'meritCycle.employees.changed',
        data: { meritCycleId: CYCLE_A, created: 1, updated: 1, removed: 0 },
      },
      { type: 'meritCycle.updated', data: { meritCycleId: CYCLE_B } },
    ]);
    expect(new Set(received.map((r) => r.id)).size).toBe(2);
    expect(received.every((r) => /^msg_[0-9a-f-]{36}$/.test(r.id))).toBe(true);

    await server.load(
      dataSet({ employeesOfA: [1, 2, 3, 4], titleOf3: 'Lead', statusOfB: 'active' }),
    );
    await server.load(dataSet({ employeesOfA: [1, 2], titleOf3: 'Lead', statusOfB: 'active' }), {
      prune: true,
    });
    const after = await receiver.waitFor(3);
    expect(after[2]?.verified).toBe(true);
    expect(after[2]?.body.data).toEqual({
      meritCycleId: CYCLE_A,
      created: 0,
      updated: 0,
      removed: 2,
    });
    expect(await deliveries(server)).toHaveLength(3);
  });

  it('compplan cycles remove sends meritCycle.removed, after its commit', async () => {
    await addEndpoint(server, receiver);
    await removeMeritCycle(server.database, CYCLE_B, {
      changeRetentionDays: DEFAULT_CHANGE_RETENTION_DAYS,
    });
    const [removed] = await receiver.waitFor(1);
    expect(removed?.verified).toBe(true);
    expect(removed?.violations).toEqual([]);
    expect(removed?.body).toMatchObject({
      type: 'meritCycle.removed',
      data: { meritCycleId: CYCLE_B },
    });
  });

  it('an import that fails records no event and sends nothing', async () => {
    const { id } = await addEndpoint(server, receiver);
    const broken = dataSet({ employeesOfA: [1, 2, 3, 5] });
    // Two employees with one email: the whole import is refused.
    broken.meritCycles[0]?.employees?.push({ ...employee(6), email: 'person5@hooked.example' });
    await expect(server.load(broken)).rejects.toThrow(/email/);
    expect(await server.database.db.selectFrom('webhook_events').selectAll().execute()).toEqual([]);
    expect(await deliveries(server)).toEqual([]);
    // A ping recorded after it is the first and only request the receiver sees.
    const { db } = server.database;
    const organization = await db
      .selectFrom('organizations')
      .select('id')
      .where('slug', '=', ORG)
      .executeTakeFirstOrThrow();
    await db.transaction().execute((trx) => recordPing(trx, organization.id, id));
    const [ping, ...more] = await receiver.waitFor(1);
    expect(ping?.body.type).toBe('ping');
    expect(more).toEqual([]);
  });

  it('a receiver that answers 500, 500, then 200 gets three attempts with one webhook-id', async () => {
    receiver.answers = [
      { status: 500, body: 'down for maintenance' },
      { status: 500, body: 'still down' },
      { status: 200 },
    ];
    await addEndpoint(server, receiver);
    await server.load(dataSet({ statusOfB: 'finalized' }));
    const received = await receiver.waitFor(3);
    expect(received.map((r) => r.verified)).toEqual([true, true, true]);
    expect(new Set(received.map((r) => r.id)).size).toBe(1);
    expect(new Set(received.map((r) => r.rawBody)).size).toBe(1);
    const [delivery] = await eventually(
      () => deliveries(server),
      (rows) => rows[0]?.state === 'delivered',
    );
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 3, last_status: 200 });
    const metrics = await server.app.metrics.registry.metrics();
    expect(metrics).toContain('compplan_webhook_deliveries_total{outcome="retrying"} 2\n');
    expect(metrics).toContain('compplan_webhook_deliveries_total{outcome="delivered"} 1\n');
    expect(metrics).toContain('compplan_webhook_deliveries_total{outcome="failed"} 0\n');
    expect(metrics).toContain('compplan_webhook_oldest_pending_seconds 0\n');
  });

  it('an endpoint receives only the event types it chose', async () => {
    const added = await addWebhookEndpoint(server.database.db, {
      org: ORG,
      url: receiver.url,
      events: ['meritCycle.removed'],
      allowPrivateNetworks: ['127.0.0.0/8'],
    });
    expect(added.events).toEqual(['meritCycle.removed']);
    await server.load(dataSet({ employeesOfA: [1, 2, 3, 4], statusOfB: 'active' }));
    expect(await deliveries(server)).toEqual([]);
  });

  it('a 410 answer disables the endpoint: its pending deliveries are cancelled and no more are recorded', async () => {
    receiver.answers = [{ status: 410, body: 'gone' }];
    const { id } = await addEndpoint(server, receiver);
    await server.load(dataSet({ statusOfB: 'active' }));
    await receiver.waitFor(1);
    expect(
      await eventually(
        () => endpointStatus(server, id),
        (s) => s === 'disabled',
      ),
    ).toBe('disabled');
    await server.load(dataSet({ statusOfB: 'inactive' }));
    const rows = await deliveries(server);
    expect(rows).toEqual([
      expect.objectContaining({ state: 'failed', last_status: 410, last_response: 'gone' }),
    ]);
    expect(receiver.received).toHaveLength(1);
  });
});

describe('retries until the schedule ends', () => {
  it('after the last retry fails the endpoint is marked failing; a later success marks it active again', async () => {
    // A millionth of the real schedule: the twelve attempts of ~68 hours in ~0.25 s.
    const server = await startTestServer({
      webhooks: LOOPBACK,
      webhookSchedule: scaledSchedule(0.000001, POLL_MS),
      dataSets: [dataSet()],
    });
    const receiver = await startWebhookReceiver();
    try {
      receiver.otherwise = { status: 503 };
      const { id } = await addEndpoint(server, receiver);
      await server.load(dataSet({ statusOfB: 'finalized' }));
      await receiver.waitFor(12, 20_000);
      const [failed] = await eventually(
        () => deliveries(server),
        (rows) => rows[0]?.state === 'failed',
        20_000,
      );
      expect(failed).toMatchObject({ attempts: 12, last_status: 503 });
      expect(await endpointStatus(server, id)).toBe('failing');
      expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
      expect(receiver.received.every((r) => r.verified)).toBe(true);

      receiver.otherwise = { status: 200 };
      await server.load(dataSet({ statusOfB: 'active' }));
      await receiver.waitFor(13);
      expect(
        await eventually(
          () => endpointStatus(server, id),
          (s) => s === 'active',
        ),
      ).toBe('active');
    } finally {
      await receiver.close();
      await server.close();
    }
  });
});

describe('shutdown', () => {
  it('gives back the lease of a delivery in flight at once, uncounted, so another instance sends it', async () => {
    const database = await createTestDatabase();
    const receiver = await startWebhookReceiver();
    try {
      const server = await startTestServer({
        database: database.config,
        webhooks: LOOPBACK,
        webhookSchedule: FAST,
        dataSets: [dataSet()],
      });
      receiver.answers = ['hang'];
      await addEndpoint(server, receiver);
      await server.load(dataSet({ statusOfB: 'active' }));
      await receiver.waitFor(1);
      const leased = await deliveries(server);
      expect(leased).toEqual([expect.objectContaining({ state: 'pending', attempts: 0 })]);
      const started = Date.now();
      await server.app.close();
      // Far below the attempt's 10 s timeout: the attempt was interrupted, not waited for.
      expect(Date.now() - started).toBeLessThan(3_000);
      const reopened = openDatabase(database.config);
      try {
        const row = await reopened.db
          .selectFrom('webhook_deliveries')
          .select(['state', 'attempts', 'lease_owner', 'lease_expires_at'])
          .executeTakeFirstOrThrow();
        expect(row).toEqual({
          state: 'pending',
          attempts: 0,
          lease_owner: null,
          lease_expires_at: null,
        });
      } finally {
        await reopened.close();
      }
    } finally {
      await receiver.close();
      await database.drop();
    }
  });
});

describe('retention', () => {
  it('deletes deliveries finished more than 30 days ago and their events; pending and recent ones stay', async () => {
    // No allowance: the dispatcher's attempts at the loopback endpoint are refused before
    // anything is sent, and the states below are set by hand.
    const server = await startTestServer({
      webhooks: { allowPrivateNetworks: [] },
      dataSets: [dataSet()],
    });
    try {
      const { db } = server.database;
      const { id } = await addWebhookEndpoint(db, {
        org: ORG,
        url: 'https://127.0.0.1:9/retention',
        allowPrivateNetworks: ['127.0.0.0/8'],
      });
      const organization = await db
        .selectFrom('organizations')
        .select('id')
        .where('slug', '=', ORG)
        .executeTakeFirstOrThrow();
      for (let n = 0; n < 4; n++) {
        await db.transaction().execute((trx) => recordPing(trx, organization.id, id));
      }
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select(['id', 'event_id'])
        .orderBy('id')
        .execute();
      const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
      // [0] delivered long ago, [1] given up long ago, [2] pending since long ago, [3] recent.
      const states = ['delivered', 'failed', 'pending', 'delivered'] as const;
      for (const [index, row] of rows.entries()) {
        const at = index < 3 ? old : new Date().toISOString();
        await db
          .updateTable('webhook_deliveries')
          .set({
            state: states[index] ?? 'pending',
            created_at: at,
            next_attempt_at: new Date(Date.now() + 86_400_000).toISOString(),
          })
          .where('id', '=', row.id)
          .execute();
        await db
          .updateTable('webhook_events')
          .set({ created_at: at })
          .where('id', '=', row.event_id)
          .execute();
      }
      await server.app.webhooks.prune();
      const left = await db.selectFrom('webhook_deliveries').select('id').orderBy('id').execute();
      expect(left.map((row) => row.id)).toEqual([rows[2]?.id, rows[3]?.id]);
      const events = await db.selectFrom('webhook_events').select('id').execute();
      expect(events.map((row) => row.id).sort()).toEqual(
        [rows[2]?.event_id, rows[3]?.event_id].sort(),
      );
    } finally {
      await server.close();
    }
  });
});
