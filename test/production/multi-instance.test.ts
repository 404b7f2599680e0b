// The production topology, for real: three `compplan serve` processes on one PostgreSQL
// database and one Redis, behind nginx running deploy/nginx.conf. What only holds across
// instances is proven here: one quota per key, cursors that any instance continues,
// revocation that reaches every instance, a web application session kept on one instance
// (Settings → Data's checked file stays where it was checked), and what nginx adds
// (request ids, failover, JSON errors of its own). Data, keys and users go in through the
// command line, as operators do.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import {
  type CompplanEnvironment,
  type CompplanInstance,
  compplan,
  compplanNodeFlags,
  startCompplan,
} from '../helpers/services/compplan.js';
import { type NginxServer, startNginx } from '../helpers/services/nginx.js';
import { waitFor } from '../helpers/services/process.js';
import { type RedisServer, startRedis } from '../helpers/services/redis.js';
import { csrfTokenOf, textOf, WebClient } from '../helpers/web-client.js';

const ORG = 'multico';
const CYCLE = {
  spring: 'mc_30000000-0000-4000-8000-000000000001',
  autumn: 'mc_30000000-0000-4000-8000-000000000002',
  closed: 'mc_30000000-0000-4000-8000-000000000003',
} as const;
// Named so that the API's order (lastName, firstName, id) is the order of this list.
const LAST_NAMES = ['Adams', 'Baker', 'Clark', 'Davis', 'Evans', 'Fisher', 'Garcia', 'Hughes'];
const EMPLOYEE_IDS = LAST_NAMES.map((_, n) => `mce_30000000-0000-4000-8000-00000000e00${n + 1}`);

function dataSet() {
  const cycle = (id: string, name: string, status: string, createdDate: string) => ({
    id,
    name,
    status,
    startDate: '2025-03-01T00:00:00.000Z',
    endDate: '2025-05-31T23:59:59.999Z',
    createdDate,
    currency: 'USD',
    exchangeRates: { EUR: 0.92 },
  });
  return {
    organization: { slug: ORG, name: 'Multi Instance Co', apiKeysEnabled: true },
    meritCycles: [
      {
        ...cycle(CYCLE.spring, 'Spring 2025', 'active', '2025-01-10T09:00:00.000Z'),
        employees: LAST_NAMES.map((lastName, n) => ({
          id: EMPLOYEE_IDS[n],
          email: `${lastName.toLowerCase()}@multico.example`,
          firstName: 'Sam',
          lastName,
          currencyCode: n % 2 === 0 ? 'USD' : 'EUR',
          eligibilityStatus: 'eligible',
          columns: {
            department: { name: 'Department', type: 'text', value: 'Operations' },
          },
        })),
      },
      cycle(CYCLE.autumn, 'Autumn 2024', 'active', '2024-07-10T09:00:00.000Z'),
      cycle(CYCLE.closed, 'Closed 2024', 'finalized', '2024-12-10T09:00:00.000Z'),
    ],
  };
}

interface CreatedKey {
  id: string;
  key: string;
}

interface ListPage {
  data: { id: string }[];
  nextCursor: string | null;
}

const PER_SECOND = 10; // RATE_LIMIT_PER_SECOND's default, which the instances run with
const BURST = 40;
const REVOCATION_DEADLINE_MS = 5_000;
const EMPLOYEES = `/v1/compensationPlanning/meritCycles/${CYCLE.spring}/employees`;
const MERIT_CYCLES = '/v1/compensationPlanning/meritCycles';

let database: TestDatabase | undefined;
let redis: RedisServer | undefined;
let nginx: NginxServer | undefined;
const instances: CompplanInstance[] = [];
let workDir: string | undefined;
/** What every instance and command runs with: the shared database and Redis. */
let env: CompplanEnvironment;
let keys: Record<'burst' | 'employees' | 'cycles' | 'revoked' | 'proxy', CreatedKey>;

function get(base: string, path: string, key: string, headers: Record<string, string> = {}) {
  return fetch(`${base}${path}`, { headers: { 'x-api-key': key, ...headers } });
}

/** Starts all three; if one fails, those that started are still stopped in afterAll. */
async function startInstances(): Promise<void> {
  const started = await Promise.allSettled(
    [1, 2, 3].map(() =>
      startCompplan(env, { ready: (readiness) => readiness.rateLimitStore === 'redis' }),
    ),
  );
  for (const result of started) if (result.status === 'fulfilled') instances.push(result.value);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}

beforeAll(async () => {
  [database, redis] = await Promise.all([createTestDatabase('postgres'), startRedis()]);
  if (database.config.dialect !== 'postgres') throw new Error('expected a PostgreSQL database');
  env = { DATABASE_URL: database.config.url, REDIS_URL: redis.url, LOG_LEVEL: 'info' };

  // As docs/operations.md has an operator do it (import applies the migrations first).
  workDir = mkdtempSync(join(tmpdir(), 'compplan-multi-'));
  const file = join(workDir, 'data-set.json');
  writeFileSync(file, JSON.stringify(dataSet()));
  await compplan(['import', file], env);
  const names = ['burst', 'employees', 'cycles', 'revoked', 'proxy'] as const;
  const created = await Promise.all(
    names.map(async (name) => {
      const stdout = await compplan(
        ['keys', 'create', '--org', ORG, '--name', name, '--json'],
        env,
      );
      return JSON.parse(stdout) as CreatedKey;
    }),
  );
  keys = Object.fromEntries(names.map((name, n) => [name, created[n]])) as typeof keys;

  await startInstances();
  nginx = await startNginx(instances.map((instance) => `127.0.0.1:${instance.port}`));
  // Ten processes start here; on a machine busy with other suites that takes a while.
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all(instances.map((instance) => instance.stop()));
  await redis?.stop();
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** nginx writes a request's log line after the response has gone out: wait for them. */
async function accessLogLines(ids: readonly string[]): Promise<Record<string, unknown>[]> {
  let lines: Record<string, unknown>[] = [];
  await waitFor(
    async () => {
      lines = (nginx as NginxServer)
        .accessLog()
        .filter((line) => ids.includes(String(line.requestId)));
      return lines.length === ids.length;
    },
    5_000,
    `nginx's access log lines of ${ids.join(', ')}`,
  );
  return lines;
}

function instanceAt(upstream: unknown): CompplanInstance | undefined {
  return instances.find((instance) => upstream === `127.0.0.1:${instance.port}`);
}

describe('three instances behind nginx, on one PostgreSQL and one Redis', () => {
  it('every instance reports Redis as its rate-limit store and the database up', async () => {
    for (const instance of instances) {
      const response = await fetch(`${instance.url}/readyz`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        status: 'ready',
        database: 'up',
        rateLimitStore: 'redis',
      });
    }
  });

  it("every instance runs Node with compplan's V8 flags, which bin/compplan.js's first line gives and both units and npm start use by executing it", async () => {
    const flags = [
      '--max-semi-space-size=8',
      '--heap-growing-percent=100',
      '--no-allocation-site-pretenuring',
    ];
    expect(compplanNodeFlags()).toEqual(flags);
    const execStart = (unit: string) =>
      /^ExecStart=(.*)$/m.exec(readFileSync(join(REPO_ROOT, 'deploy', unit), 'utf8'))?.[1];
    expect(execStart('compplan.service')).toBe('/opt/compplan/bin/compplan.js serve');
    expect(execStart('compplan@.service')).toBe('/opt/compplan/bin/compplan.js serve --port %i');
    const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(packageJson.scripts.start).toBe('bin/compplan.js serve --demo');
    for (const instance of instances) {
      const commandLine = readFileSync(`/proc/${instance.pid}/cmdline`, 'utf8').split('\0');
      expect(commandLine.slice(1, 1 + flags.length)).toEqual(flags);
    }
  });

  it("nginx passes a caller's X-Request-Id to the instance, which returns and logs it; without a usable one nginx makes the id", async () => {
    const proxy = nginx as NginxServer;
    const given = `trace-${randomUUID()}`;
    const sent = [
      { header: given, expected: given },
      { header: undefined, expected: /^[0-9a-f]{32}$/ },
      { header: 'not a plain token!', expected: /^[0-9a-f]{32}$/ },
    ];
    const ids: string[] = [];
    for (const { header, expected } of sent) {
      const response = await get(
        proxy.url,
        '/ping',
        keys.proxy.key,
        header ? { 'x-request-id': header } : {},
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ message: 'pong' });
      const id = response.headers.get('x-request-id') ?? '';
      if (typeof expected === 'string') expect(id).toBe(expected);
      else expect(id).toMatch(expected);
      ids.push(id);
    }
    expect(new Set(ids).size).toBe(3);

    // One id in nginx's access log and in the log of the instance that served it.
    for (const id of ids) {
      const [entry] = await accessLogLines([id]);
      expect(entry).toMatchObject({ method: 'GET', uri: '/ping', status: 200 });
      const instance = instanceAt(entry?.upstream);
      expect(instance).toBeDefined();
      await waitFor(
        async () =>
          (instance as CompplanInstance)
            .logs()
            .some((line) => line.requestId === id && line.msg === 'request completed'),
        5_000,
        `the log line of request ${id}`,
      );
    }
    // Neither log ever holds the key.
    const everyLog = JSON.stringify([proxy.accessLog(), ...instances.map((i) => i.logs())]);
    expect(everyLog).not.toContain(keys.proxy.key);
  });

  it('a burst of 40 requests with one key, spread by nginx over three instances, gets exactly 10 answers in the quota window: the quota is shared through Redis', async () => {
    const proxy = nginx as NginxServer;
    // The key is new: its window opens at the burst's first request and lasts 1 s, so a
    // burst that is over within 1 s of starting lies wholly inside one window. A burst that
    // took longer (a busy machine) would prove nothing: it is repeated once the window has
    // passed, never judged.
    let responses: Response[] = [];
    let ids: string[] = [];
    for (let attempt = 1; ; attempt++) {
      ids = Array.from({ length: BURST }, (_, n) => `burst-${attempt}-${n}`);
      const started = performance.now();
      responses = await Promise.all(
        ids.map((id) => get(proxy.url, '/ping', keys.burst.key, { 'x-request-id': id })),
      );
      const bodies = await Promise.all(responses.map((response) => response.text()));
      const elapsed = performance.now() - started;
      if (elapsed < 900) {
        expect(bodies.filter((body) => body === '{"message":"pong"}')).toHaveLength(PER_SECOND);
        expect(
          bodies.filter((body) => body === '{"message":"Too Many Requests","statusCode":429}'),
        ).toHaveLength(BURST - PER_SECOND);
        break;
      }
      if (attempt === 3) throw new Error(`three bursts each took over 900 ms (${elapsed} ms)`);
      await sleep(1_100);
    }

    const ok = responses.filter((response) => response.status === 200);
    const limited = responses.filter((response) => response.status === 429);
    expect(ok).toHaveLength(PER_SECOND);
    expect(limited).toHaveLength(BURST - PER_SECOND);
    // One counter: the ten successes saw remaining 9, 8, …, 0 once each.
    const remaining = ok.map((response) => response.headers.get('ratelimit'));
    expect(remaining.sort()).toEqual(
      Array.from({ length: PER_SECOND }, (_, n) => `"default";r=${n};t=1`),
    );
    for (const response of ok) {
      expect(response.headers.get('ratelimit-policy')).toBe('"default";q=10;w=1');
    }
    for (const response of limited) {
      expect(response.headers.get('retry-after')).toBe('1');
      expect(response.headers.get('ratelimit')).toBe('"default";r=0;t=1');
    }

    // Each instance got more requests than the quota: per-instance counters would have
    // let at least 30 through.
    const burstLines = await accessLogLines(ids);
    const perInstance = instances.map(
      (instance) =>
        burstLines.filter((line) => line.upstream === `127.0.0.1:${instance.port}`).length,
    );
    expect(perInstance.reduce((sum, n) => sum + n, 0)).toBe(BURST);
    for (const count of perInstance) expect(count).toBeGreaterThan(PER_SECOND);
  });

  it('a cursor issued by one instance continues on another: a walk across all three returns exactly what a walk on one does', async () => {
    const servers = instances.map((instance) => instance.url);
    const walk = async (
      firstPath: string,
      nextPath: (cursor: string) => string,
      key: string,
      serverFor: (page: number) => string,
    ) => {
      const pages: ListPage[] = [];
      let path: string | null = firstPath;
      while (path !== null) {
        const response = await get(serverFor(pages.length), path, key);
        expect(response.status).toBe(200);
        const page = (await response.json()) as ListPage;
        pages.push(page);
        path = page.nextCursor === null ? null : nextPath(page.nextCursor);
      }
      return pages;
    };
    const first = () => servers[0] as string;
    const eachInTurn = (page: number) => servers[page % servers.length] as string;

    const employeesFirst = `${EMPLOYEES}?limit=3`;
    const employeesNext = (cursor: string) =>
      `${EMPLOYEES}?limit=3&nextCursor=${encodeURIComponent(cursor)}`;
    const onOne = await walk(employeesFirst, employeesNext, keys.employees.key, first);
    const acrossAll = await walk(employeesFirst, employeesNext, keys.employees.key, eachInTurn);
    expect(onOne.map((page) => page.data.length)).toEqual([3, 3, 2]);
    expect(onOne.flatMap((page) => page.data.map((employee) => employee.id))).toEqual(EMPLOYEE_IDS);
    expect(acrossAll).toEqual(onOne);

    // A filtered list: the cursor alone carries the filter to the next instance.
    const cyclesFirst = `${MERIT_CYCLES}?status=active&limit=1`;
    const cyclesNext = (cursor: string) =>
      `${MERIT_CYCLES}?limit=1&nextCursor=${encodeURIComponent(cursor)}`;
    const cyclesOnOne = await walk(cyclesFirst, cyclesNext, keys.cycles.key, first);
    const cyclesAcross = await walk(cyclesFirst, cyclesNext, keys.cycles.key, eachInTurn);
    expect(cyclesOnOne.flatMap((page) => page.data.map((cycle) => cycle.id))).toEqual([
      CYCLE.spring,
      CYCLE.autumn,
    ]);
    expect(cyclesAcross).toEqual(cyclesOnOne);
  });

  it('a key revoked with `compplan keys revoke` is refused (401) by all three instances within 5 seconds', async () => {
    // Every instance has just accepted the key, so every instance has it cached.
    for (const instance of instances) {
      expect((await get(instance.url, '/ping', keys.revoked.key)).status).toBe(200);
    }
    await compplan(['keys', 'revoke', keys.revoked.id], env);
    const revokedAt = performance.now();

    // Each instance is asked every 400 ms (7.5 requests a second in all, under the key's
    // quota, so that a 429 never hides the answer) until it refuses the key.
    const refusedAfter = await Promise.all(
      instances.map(async (instance, n) => {
        await sleep(n * 130);
        for (;;) {
          const response = await get(instance.url, '/ping', keys.revoked.key);
          const body = await response.json();
          const ms = performance.now() - revokedAt;
          if (response.status === 401) {
            expect(body).toMatchObject({ statusCode: 401, message: 'Missing or invalid API key' });
            return ms;
          }
          expect(response.status).toBe(200);
          if (ms > REVOCATION_DEADLINE_MS + 1_000) return ms;
          await sleep(400);
        }
      }),
    );
    for (const ms of refusedAfter) expect(ms).toBeLessThanOrEqual(REVOCATION_DEADLINE_MS);
    // And it stays refused, through nginx too.
    for (const base of [...instances.map((instance) => instance.url), (nginx as NginxServer).url]) {
      expect((await get(base, '/ping', keys.revoked.key)).status).toBe(401);
    }
  });

  it('a signed-in session stays on one instance: an upload of 2 MB through nginx is checked, and the page it leads to and its Import reach the instance that checked it', async () => {
    const proxy = nginx as NginxServer;
    const DATA = '/app/settings/data';
    const email = 'owner@multico.example';
    const created = JSON.parse(
      await compplan(
        ['users', 'create', '--org', ORG, '--email', email, '--role', 'owner', '--json'],
        env,
      ),
    ) as { oneTimePassword: string };
    const client = new WebClient(proxy.url);
    await client.signInFirstTime(email, created.oneTimePassword, 'a long enough password');

    // A new cycle of 8,000 employees, as NDJSON: about 2 MB, far over the 16 KiB nginx
    // takes for the other forms.
    const { organization } = dataSet();
    const cycle = { ...dataSet().meritCycles[1], id: undefined, name: 'Uploaded 2025' };
    const lines = [JSON.stringify({ organization }), JSON.stringify({ meritCycle: cycle })];
    for (let n = 0; n < 8_000; n++) {
      const employee = {
        email: `uploaded${n}@multico.example`,
        firstName: 'Uma',
        lastName: `Loaded ${n}`,
        currencyCode: 'USD',
        eligibilityStatus: 'eligible',
        columns: { department: { name: 'Department', type: 'text', value: 'Operations' } },
      };
      lines.push(JSON.stringify({ employee, meritCycle: cycle.name }));
    }
    const content = `${lines.join('\n')}\n`;
    expect(content.length).toBeGreaterThan(2_000_000);

    const started = proxy.accessLog().length;
    const checked = await client.upload(
      `${DATA}/check`,
      { _csrf: await client.csrfToken(DATA), format: 'data-set' },
      { name: 'uploaded.ndjson', content },
    );
    expect(checked.status).toBe(303);
    const page = await client.get(checked.location ?? '');
    expect(textOf(page.body)).toContain('Checked: uploaded.ndjson The file has no problems.');
    const imported = await client.post(`${DATA}/import`, {
      _csrf: csrfTokenOf(page.body),
      token: /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '',
    });
    expect(imported.status).toBe(303);
    expect(textOf((await client.get(DATA)).body)).toContain(
      'Imported uploaded.ndjson: merit cycles 1 created, 0 updated, 0 unchanged; employees 8,000 created, 0 updated, 0 unchanged, 0 removed.',
    );

    // Every request of the session went to the same instance.
    let upstreams = new Set<unknown>();
    await waitFor(
      async () => {
        const lines = proxy.accessLog().slice(started);
        upstreams = new Set(lines.map((line) => line.upstream));
        return lines.filter((line) => String(line.uri).startsWith(DATA)).length >= 5;
      },
      5_000,
      "nginx's access log lines of the session's requests",
    );
    expect(upstreams.size).toBe(1);
    expect(instanceAt([...upstreams][0])).toBeDefined();
  }, 120_000);

  it('an instance that stops is skipped: every GET through nginx still gets its 200', async () => {
    const proxy = nginx as NginxServer;
    const stopped = instances[2] as CompplanInstance;
    // SIGTERM: a graceful stop, exit code 0.
    expect(await stopped.stop()).toBe(0);
    const ids = Array.from({ length: 6 }, (_, n) => `after-stop-${n}`);
    for (const id of ids) {
      const response = await get(proxy.url, `${MERIT_CYCLES}/${CYCLE.spring}`, keys.proxy.key, {
        'x-request-id': id,
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { id: string }).id).toBe(CYCLE.spring);
    }
    const lines = await accessLogLines(ids);
    expect(lines.map((line) => line.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // What reached the stopped one was retried on another (the upstream list shows both).
    for (const line of lines) {
      const served = String(line.upstream).split(', ').at(-1);
      expect(served).not.toBe(`127.0.0.1:${stopped.port}`);
    }
  });

  it('with no instance left, nginx answers 502 with the JSON error body the API uses, a Retry-After and the request id', async () => {
    const proxy = nginx as NginxServer;
    for (const instance of instances) await instance.stop();
    const response = await get(proxy.url, `${MERIT_CYCLES}?status=active`, keys.proxy.key, {
      'x-request-id': 'no-instance-left',
    });
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('x-request-id')).toBe('no-instance-left');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      path: MERIT_CYCLES,
      message: 'Bad Gateway: no compplan instance could be reached',
      statusCode: 502,
    });
    expect(Math.abs(Date.parse(String(body.timestamp)) - Date.now())).toBeLessThan(5_000);
  });
});
