// A PostgreSQL that stops answering without closing anything (a network cut, a frozen
// host): its processes are stopped with SIGSTOP, connections stay open, nothing is
// refused, and then SIGCONT lets it go on. The API answers 503 within its bounds meanwhile
// (src/db/timeouts.ts; smaller here through the test's DatabaseConfig), /readyz says "not
// ready" within its own, and everything serves again within a second of the database
// answering. The webhook dispatcher resumes; an import fails and changes nothing.
// A throwaway cluster of its own: freezing it affects no other test.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig, PostgresBounds } from '../../src/config.js';
import { addWebhookEndpoint } from '../../src/webhooks/service.js';
import { ACME, acmeDataSet, CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import { employeesPath, errorBody, JSON_TYPE } from '../helpers/api-expectations.js';
import { runCli } from '../helpers/cli.js';
import { createDatabaseIn } from '../helpers/databases.js';
import { scaledSchedule, startTestServer, type TestServer } from '../helpers/server.js';
import { ClusterFreezer } from '../helpers/services/frozen-cluster.js';
import { type PostgresCluster, startPostgres } from '../helpers/services/postgres.js';
import { waitFor } from '../helpers/services/process.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

// Small bounds, so that the outage is seen in about a second.
const BOUNDS: Partial<PostgresBounds> = {
  connectMs: 1_000,
  statementMs: 800,
  queryMs: 1_000,
  turnWaitMs: 2_000,
  readinessMs: 500,
};
// An answer within the larger of the connect and query bounds, with slack for a loaded
// 2-core machine: never the length of the freeze.
const ANSWER_WITHIN_MS = 2_500;
const READY_WITHIN_MS = 1_500;
const FREEZE_MS = 4_000;
const UNAVAILABLE = 'Service Unavailable: the database cannot be reached';

let cluster: PostgresCluster;
let freezer: ClusterFreezer;
beforeAll(async () => {
  cluster = await startPostgres();
  freezer = new ClusterFreezer(cluster);
});
afterAll(async () => {
  await thaw();
  await cluster?.destroy();
});
// Whatever a test did, nothing stays frozen.
afterEach(async () => {
  await thaw();
});

/** SIGSTOP the cluster's processes (test/helpers/services/frozen-cluster.ts). */
function freeze(): void {
  freezer.freeze();
}

async function thaw(): Promise<void> {
  freezer?.thaw();
}

async function createDatabase(name: string): Promise<DatabaseConfig & { dialect: 'postgres' }> {
  return { ...(await createDatabaseIn(cluster.url, name)), bounds: BOUNDS };
}

interface Answer {
  path: string;
  status: number | string;
  retryAfter: string | null;
  contentType: string | null;
  text: string;
  /** performance.now() when it was sent, and how long it took. */
  sentAt: number;
  ms: number;
}

async function timedGet(baseUrl: string, path: string, key: string | null): Promise<Answer> {
  const sentAt = performance.now();
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      headers: key === null ? {} : { 'x-api-key': key },
      signal: AbortSignal.timeout(FREEZE_MS * 3),
    });
    const text = await response.text();
    return {
      path,
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      contentType: response.headers.get('content-type'),
      text,
      sentAt,
      ms: performance.now() - sentAt,
    };
  } catch (error) {
    const reason = String((error as Error).cause ?? error);
    return { path, status: reason, retryAfter: null, contentType: null, text: '', sentAt, ms: 0 };
  }
}

/**
 * Clients that each poll a path of their own, one request after another, until stopped;
 * every answer kept. `distinct`: each request of a client asks for a page of another size
 * (`?limit=N`), so that none is answered from the response cache.
 */
function poll(baseUrl: string, paths: string[], key: string | null, distinct = false) {
  const answers: Answer[] = [];
  let polling = true;
  const clients = paths.map(async (path) => {
    for (let i = 0; polling; i++) {
      const url = distinct ? `${path}?limit=${(i % 100) + 1}` : path;
      answers.push(await timedGet(baseUrl, url, key));
      await sleep(50);
    }
  });
  return {
    answers,
    async stop() {
      polling = false;
      await Promise.all(clients);
    },
  };
}

describe('PostgreSQL frozen (SIGSTOP) under polling clients, then let go (SIGCONT)', () => {
  let server: TestServer;
  let key: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    server = await startTestServer({
      database: await createDatabase('compplan_frozen'),
      dataSets: [acmeDataSet()],
      // Retries after 1 s instead of 5.
      webhooks: { allowPrivateNetworks: ['127.0.0.0/8'] },
      webhookSchedule: scaledSchedule(0.2),
    });
    key = await server.createKey(ACME);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await thaw();
    await receiver?.close();
    await server?.close();
  });

  it('answers 503 with Retry-After within its bounds while frozen, /readyz "not ready" within its own, and serves again within a second of the database answering', async () => {
    const paths = [
      employeesPath(CYCLE.annual2025),
      employeesPath(CYCLE.midYear),
      employeesPath(CYCLE.offset),
    ];
    // Connections open in the pool before the freeze: the requests that meet it use them.
    const opened = await Promise.all(paths.map((path) => timedGet(server.url, path, key)));
    expect(opened.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const api = poll(server.url, paths, key, true);
    const ready = poll(server.url, ['/readyz'], null);
    await sleep(300);
    freeze();
    const frozenAt = performance.now();
    await sleep(FREEZE_MS);
    await thaw();
    const thawedAt = performance.now();
    await sleep(2_000);
    await api.stop();
    await ready.stop();

    const all = [...api.answers, ...ready.answers];
    const summary = JSON.stringify(
      all.map(({ path, status, sentAt, ms }) => ({
        path,
        status,
        at: Math.round(sentAt - frozenAt),
        ms: Math.round(ms),
      })),
    );
    // Never a hang, never an error of the server, never a refused connection.
    expect(
      all.filter((answer) => answer.status !== 200 && answer.status !== 503),
      summary,
    ).toEqual([]);
    expect(
      all.filter((answer) => answer.ms >= ANSWER_WITHIN_MS),
      summary,
    ).toEqual([]);

    const during = (answer: Answer) =>
      answer.sentAt >= frozenAt && answer.sentAt + answer.ms <= thawedAt;
    const apiDuring = api.answers.filter(during);
    expect(apiDuring.length, summary).toBeGreaterThan(3);
    expect(apiDuring.filter((answer) => answer.status === 503).length, summary).toBeGreaterThan(3);
    for (const answer of api.answers.filter((a) => a.status === 503)) {
      expect(answer.retryAfter).toBe('1');
      expect(answer.contentType).toBe(JSON_TYPE);
      expect(JSON.parse(answer.text)).toEqual(
        errorBody(answer.path.split('?')[0] as string, UNAVAILABLE, 503),
      );
    }

    const readyDuring = ready.answers.filter(during);
    expect(readyDuring.length, summary).toBeGreaterThan(2);
    for (const answer of readyDuring) {
      expect(answer.status, summary).toBe(503);
      expect(answer.ms, summary).toBeLessThan(READY_WITHIN_MS);
      expect(JSON.parse(answer.text)).toEqual({
        status: 'unavailable',
        database: 'down',
        rateLimitStore: 'local',
      });
    }

    // A second after the database answers again, every request succeeds: no connection
    // broken during the outage is handed out again.
    const after = all.filter((answer) => answer.sentAt >= thawedAt + 1_000);
    expect(after.length, summary).toBeGreaterThan(5);
    expect(
      after.filter((answer) => answer.status !== 200),
      summary,
    ).toEqual([]);
    const burst = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        timedGet(server.url, `${employeesPath(CYCLE.annual2025)}?limit=${i + 1}`, key),
      ),
    );
    expect(burst.map((answer) => answer.status)).toEqual(Array(15).fill(200));

    // The outage is a warning, never an error; its connections were closed as unanswered.
    expect(server.logs.filter((line) => (line.level as number) >= 50)).toEqual([]);
    const unanswered = server.logs.filter(
      (line) =>
        line.msg === 'database unavailable' &&
        (line.err as { type?: string } | undefined)?.type === 'DatabaseNotAnswering',
    );
    expect(unanswered.length).toBeGreaterThan(0);
  });

  it('delivers a webhook whose retry fell due while the database was frozen, once it answers again', async () => {
    const { secret } = await addWebhookEndpoint(server.database.db, {
      org: ACME,
      url: receiver.url,
      allowPrivateNetworks: ['127.0.0.0/8'],
    });
    receiver.secret = secret;
    receiver.answers = [{ status: 500 }];
    receiver.otherwise = { status: 204 };
    // Another import that changes the cycle: one event, its first attempt answered 500.
    const changed = acmeDataSet();
    const cycle = changed.meritCycles?.[0] as { name: string };
    cycle.name = `${cycle.name} (renamed)`;
    await server.load(changed);
    await receiver.waitFor(1);
    const attempts = async () =>
      (
        await server.database.db
          .selectFrom('webhook_deliveries')
          .select(['id', 'attempts', 'state'])
          .execute()
      ).map((row) => ({ ...row, attempts: Number(row.attempts) }));
    await waitFor(
      async () => (await attempts())[0]?.attempts === 1,
      5_000,
      'the first attempt recorded',
    );

    freeze();
    // The retry falls due 1 s later, while the dispatcher cannot claim it.
    await sleep(FREEZE_MS);
    await thaw();
    const thawedAt = performance.now();
    const received = await receiver.waitFor(2, 10_000);
    expect(performance.now() - thawedAt).toBeLessThan(5_000);
    expect(received.map((request) => request.id)).toEqual([received[0]?.id, received[0]?.id]);
    expect(received.every((request) => request.verified)).toBe(true);
    await waitFor(
      async () => (await attempts())[0]?.state === 'delivered',
      5_000,
      'the delivery recorded as delivered',
    );
    expect(await attempts()).toEqual([
      expect.objectContaining({ attempts: 2, state: 'delivered' }),
    ]);
    expect(server.logs.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});

describe('compplan import while PostgreSQL is frozen', () => {
  const file = join(tmpdir(), `compplan-frozen-import-${process.pid}.json`);
  afterAll(() => rmSync(file, { force: true }));

  it('fails with one line within its bound, and changes nothing', async () => {
    // The production bounds (the command line reads no test bounds): detection within
    // 2 × 3 s + 3 s of the freeze (src/db/timeouts.ts).
    const database = await createDatabase('compplan_frozen_import');
    const observer = new pg.Client({ connectionString: database.url });
    const employees = async () =>
      Number(
        (await observer.query<{ n: string }>('select count(*) as n from merit_cycle_employees'))
          .rows[0]?.n,
      );
    writeFileSync(file, JSON.stringify(largeCycleDataSet(30_000)));
    const migrated = await runCli(['migrate'], { env: { DATABASE_URL: database.url } });
    expect(migrated.code, migrated.stderr).toBe(0);
    await observer.connect();
    try {
      expect(await employees()).toBe(0);
      const importing = runCli(['import', file], {
        env: { DATABASE_URL: database.url },
        timeoutMs: 60_000,
      });
      // Frozen once the import writes its staging rows, inside its transaction.
      await waitFor(
        async () => {
          const { rows } = await observer.query(
            `select 1 from pg_stat_activity
              where application_name = 'compplan' and xact_start is not null
                and query ilike '%compplan_import_employees%'`,
          );
          return rows.length > 0;
        },
        20_000,
        'the import to write its staging rows',
      );
      freeze();
      const frozenAt = performance.now();
      const result = await importing;
      const failedAfterMs = performance.now() - frozenAt;
      await thaw();
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(
          `^compplan: PostgreSQL at 127\\.0\\.0\\.1:${cluster.port} stopped answering \\(no answer within \\d+(\\.\\d)? s\\); the connection was closed, so its transaction was not committed\\. Try again once it answers\\.\\n$`,
        ),
      );
      expect(failedAfterMs).toBeLessThan(9_000 + 4_000);
      // The server, going on, rolls the transaction back: nothing of it is kept.
      await waitFor(
        async () => {
          const { rows } = await observer.query(
            `select 1 from pg_stat_activity where application_name = 'compplan'`,
          );
          return rows.length === 0;
        },
        10_000,
        'the import connection to be gone',
      );
      expect(await employees()).toBe(0);
    } finally {
      await thaw();
      await observer.end();
    }
  });
});
