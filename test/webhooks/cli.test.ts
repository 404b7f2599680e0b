// compplan webhooks add | list | remove | test (docs/webhooks.md), and delivery by
// real `compplan serve` processes: after a crash, and by two instances at once. Every
// receiver is a node:http server on 127.0.0.1 that verifies each signature with the
// standardwebhooks library; the servers run with WEBHOOK_ALLOW_PRIVATE_NETWORKS for it.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import {
  addWebhookEndpoint,
  listOrganizationWebhooks,
  removeWebhookEndpointById,
} from '../../src/webhooks/service.js';
import {
  type CliServer,
  runAllCli,
  runCli,
  startCliServer,
  stopAllProcesses,
} from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { importDataSet } from '../helpers/set-up.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const ORG = 'clihooks';
const WH_ID = /^wh_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;

/** A data set of `cycles` merit cycles, all with `status`: changing it changes every cycle. */
function dataSet(cycles: number, status: 'active' | 'inactive' | 'finalized') {
  return {
    organization: { slug: ORG, name: 'CLI Hooks', apiKeysEnabled: true },
    meritCycles: Array.from({ length: cycles }, (_, n) => ({
      id: `mc_40000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      name: `Cycle ${n}`,
      status,
      startDate: '2026-01-01T00:00:00.000Z',
      endDate: '2026-03-31T00:00:00.000Z',
      currency: 'USD',
    })),
  };
}

interface Listed {
  id: string;
  url: string;
  status: string;
  deliveries: { id: string; eventType: string; state: string; attempts: number }[];
}

describe('compplan webhooks', () => {
  let database: TestDatabase;
  let databaseUrl: string;
  let env: Record<string, string>;
  const servers: CliServer[] = [];
  let receiver: WebhookReceiver;

  /**
   * Loads the data set as `compplan import` does, in this process: outside the servers,
   * whose dispatchers find its events in the database.
   */
  async function load(cycles: number, status: 'active' | 'inactive' | 'finalized') {
    await importDataSet(databaseUrl, dataSet(cycles, status));
  }

  async function serve() {
    const server = await startCliServer([], {
      ...env,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
    });
    servers.push(server);
    return server;
  }

  /**
   * An endpoint for a receiver on loopback, added by the service `webhooks add` calls, in
   * this process (the command's own output is the subject of the tests of `add` above).
   */
  async function add(url: string) {
    const handle = openDatabase(database.config);
    try {
      return await addWebhookEndpoint(handle.db, {
        org: ORG,
        url,
        allowPrivateNetworks: ['127.0.0.0/8'],
      });
    } finally {
      await handle.close();
    }
  }

  /** `webhooks add` of https://hooks.example.com/compplan for these --events, as typed. */
  const addExample = (events: string) =>
    runCli(
      [
        'webhooks',
        'add',
        '--org',
        ORG,
        '--url',
        'https://hooks.example.com/compplan',
        '--events',
        events,
      ],
      { env },
    );

  async function list(): Promise<Listed[]> {
    const result = await runCli(['webhooks', 'list', '--org', ORG, '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Listed[];
  }

  /** The endpoints as `list` reads them, read in this process: polled without a command each time. */
  async function listed() {
    const handle = openDatabase(database.config);
    try {
      return await listOrganizationWebhooks(handle.db, ORG);
    } finally {
      await handle.close();
    }
  }

  async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 20_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (check(value)) return value;
      if (Date.now() > deadline)
        throw new Error(`not reached in ${ms} ms: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    const { config } = database;
    databaseUrl = config.dialect === 'sqlite' ? `sqlite:${config.path}` : config.url;
    env = { DATABASE_URL: databaseUrl };
    await load(3, 'active');
  });
  afterAll(async () => {
    await stopAllProcesses();
    await database.drop();
  });
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    await receiver.close();
    // Through the service `webhooks remove` calls, in this process: a command started for
    // each endpoint would only repeat what the test of `remove` runs.
    const handle = openDatabase(database.config);
    try {
      for (const endpoint of await listOrganizationWebhooks(handle.db, ORG)) {
        await removeWebhookEndpointById(handle.db, endpoint.id);
      }
    } finally {
      await handle.close();
    }
  });

  it.each([
    ['http://10.0.0.1/hook', '10.0.0.1 is not a public address (private)'],
    [
      'http://169.254.169.254/latest/meta-data',
      '169.254.169.254 is not a public address (link local)',
    ],
    ['http://[fd00::1]/hook', 'fd00::1 is not a public address (unique local)'],
  ])('add refuses %s, before anything is sent, and writes nothing', async (url, reason) => {
    const allowances = [undefined, '127.0.0.0/8'];
    const results = await runAllCli(
      allowances.map(() => ['webhooks', 'add', '--org', ORG, '--url', url]),
      (index) => ({ env: { ...env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: allowances[index] } }),
    );
    for (const [index, result] of results.entries()) {
      const allowance = allowances[index];
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        allowance
          ? `compplan: Refused webhook URL: ${reason}; allow its range with WEBHOOK_ALLOW_PRIVATE_NETWORKS\n`
          : 'compplan: A webhook URL must start with https:// (http:// only to networks named in WEBHOOK_ALLOW_PRIVATE_NETWORKS), not http://\n',
      );
    }
    expect(await list()).toEqual([]);
    const handle = openDatabase(database.config);
    try {
      for (const table of ['webhook_endpoints', 'webhook_events', 'webhook_deliveries'] as const) {
        expect(await handle.db.selectFrom(table).selectAll().execute()).toEqual([]);
      }
    } finally {
      await handle.close();
    }
  });

  it('add refuses an event list with an empty item (a comma too many) and writes nothing', async () => {
    const result = await addExample('meritCycle.removed,');
    expect(result).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr:
        'compplan: --events has an empty item in "meritCycle.removed,": remove the extra comma\n',
    });
    expect(await list()).toEqual([]);
  });

  it('add prints the whsec_ secret once; list shows the endpoint without it; remove removes it', async () => {
    const text = await addExample('meritCycle.removed');
    expect(text.code, text.stderr).toBe(0);
    const secret = /^ {2}(whsec_\S+)$/m.exec(text.stdout)?.[1] ?? '';
    expect(secret).toMatch(SECRET);
    const id =
      /^Added webhook endpoint (\S+) for clihooks: https:\/\/hooks\.example\.com\/compplan$/m.exec(
        text.stdout,
      )?.[1];
    expect(id).toMatch(WH_ID);
    expect(text.stdout).toContain('Events: meritCycle.removed (and ping');

    const listed = await list();
    expect(listed).toEqual([
      {
        id,
        organizationId: expect.stringMatching(/^org_/),
        url: 'https://hooks.example.com/compplan',
        events: ['meritCycle.removed'],
        status: 'active',
        createdAt: expect.any(String),
        deliveries: [],
      },
    ]);
    const shown = await runCli(['webhooks', 'list', '--org', ORG], { env });
    expect(shown.stdout).toContain(`${id}  https://hooks.example.com/compplan  meritCycle.removed`);
    expect(`${shown.stdout}${JSON.stringify(listed)}`).not.toContain(secret.slice(6));

    const removed = await runCli(['webhooks', 'remove', id ?? ''], { env });
    expect(removed).toMatchObject({
      code: 0,
      stdout: `Removed webhook endpoint ${id} (https://hooks.example.com/compplan) of clihooks.\n`,
    });
    expect(await list()).toEqual([]);
    expect(await runCli(['webhooks', 'remove', id ?? ''], { env })).toMatchObject({
      code: 1,
      stderr: `compplan: No webhook endpoint ${id}\n`,
    });
  });

  it('webhooks test records a ping that a running compplan serve delivers, signed', async () => {
    const [, added] = await Promise.all([serve(), add(receiver.url)]);
    receiver.secret = added.secret;
    const result = await runCli(['webhooks', 'test', added.id], { env });
    expect(result.code, result.stderr).toBe(0);
    const [ping] = await receiver.waitFor(1);
    expect(ping).toMatchObject({
      verified: true,
      violations: [],
      body: { type: 'ping', data: { endpointId: added.id } },
    });
    await until(listed, (l) => l[0]?.deliveries[0]?.state === 'delivered');
    const [endpoint] = await list();
    expect(endpoint?.deliveries).toEqual([
      expect.objectContaining({ id: ping?.id, eventType: 'ping', state: 'delivered', attempts: 1 }),
    ]);
  });

  it('webhooks test refuses a disabled endpoint and an unknown id, and records nothing', async () => {
    const added = await add(receiver.url);
    const handle = openDatabase(database.config);
    try {
      await handle.db
        .updateTable('webhook_endpoints')
        .set({ status: 'disabled' })
        .where('id', '=', added.id)
        .execute();
    } finally {
      await handle.close();
    }
    expect(await runCli(['webhooks', 'test', added.id], { env })).toMatchObject({
      code: 1,
      stderr: `compplan: Webhook endpoint ${added.id} is disabled (it answered 410 Gone): remove it and add it again\n`,
    });
    const unknown = 'wh_00000000-0000-4000-8000-000000000000';
    expect(await runCli(['webhooks', 'test', unknown], { env })).toMatchObject({
      code: 1,
      stderr: `compplan: No webhook endpoint ${unknown}\n`,
    });
    expect((await list())[0]?.deliveries).toEqual([]);
  });

  it('a server killed (SIGKILL) after an import committed, mid-delivery, loses nothing: the next one delivers with the same webhook-id', async () => {
    const [first, added] = await Promise.all([serve(), add(receiver.url)]);
    receiver.secret = added.secret;
    receiver.answers = ['hang'];
    // The first of the file's cycles only: one event, whose delivery the receiver holds.
    await load(1, 'inactive');
    const [held] = await receiver.waitFor(1);
    first.process.kill('SIGKILL');
    await new Promise((resolve) => first.process.once('exit', resolve));
    // The dead instance's lease (30 s) runs out: its end moved to now in the database, as
    // the clock would move it, instead of waited for.
    const handle = openDatabase(database.config);
    try {
      const leased = await handle.db
        .updateTable('webhook_deliveries')
        .set({ lease_expires_at: new Date().toISOString() })
        .where('id', '=', held?.id ?? '')
        .where('lease_expires_at', 'is not', null)
        .executeTakeFirst();
      expect(leased.numUpdatedRows).toBe(1n);
    } finally {
      await handle.close();
    }

    await serve();
    const received = await receiver.waitFor(2);
    expect(received.map((r) => [r.id, r.body.type, r.verified])).toEqual([
      [held?.id, 'meritCycle.updated', true],
      [held?.id, 'meritCycle.updated', true],
    ]);
    expect(received[1]?.rawBody).toBe(held?.rawBody);
    await until(listed, (l) => l[0]?.deliveries[0]?.state === 'delivered');
    const [endpoint] = await list();
    expect(endpoint?.deliveries).toEqual([
      expect.objectContaining({ id: held?.id, state: 'delivered', attempts: 1 }),
    ]);
  });

  it('two instances on one database deliver each event once', async () => {
    const [, , added] = await Promise.all([serve(), serve(), add(receiver.url)]);
    receiver.secret = added.secret;
    await load(24, 'finalized');
    // 3 cycles updated, 21 created: 24 events.
    const received = await receiver.waitFor(24);
    // Both instances stopped (SIGTERM: each dispatches through the second it keeps
    // accepting, then closes), and every request they sent read: exactly one per event.
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    await receiver.settled();
    expect(received.every((r) => r.verified)).toBe(true);
    expect(receiver.received).toHaveLength(24);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(24);
  });
});
