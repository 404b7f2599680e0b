// Faults a production deployment meets (PostgreSQL + Redis): the database going away and
// coming back, Redis going away and coming back, and SIGTERM while requests are in flight.
// Each part starts throwaway services of its own, so stopping them affects no other test.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { ACME, acmeDataSet, CYCLE, LARGE_CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import {
  cyclePath,
  employeesPath,
  errorBody,
  JSON_TYPE,
  MERIT_CYCLES,
  ratesPath,
} from '../helpers/api-expectations.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { createDatabaseIn } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type PostgresCluster, startPostgres } from '../helpers/services/postgres.js';
import { freePort, stopProcess, waitFor } from '../helpers/services/process.js';
import { type RedisServer, startRedis } from '../helpers/services/redis.js';

/** decisions: a request during an outage is answered (503/504), within this, never hung. */
const ANSWER_WITHIN_MS = 5_000;

const createDatabase = (cluster: PostgresCluster, name: string): Promise<DatabaseConfig> =>
  createDatabaseIn(cluster.url, name);

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  ms: number;
}

/** GET through fetch, timed; aborted (failing the test) if it takes far longer than allowed. */
async function timedGet(baseUrl: string, path: string, key: string | null): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${path}`, {
    headers: key === null ? {} : { 'x-api-key': key },
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS * 2),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    ms: performance.now() - started,
  };
}

/** How many times each result occurs: `{ "200": 50, "ECONNREFUSED": 3 }`. */
function tally(results: readonly (number | string)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[String(result)] = (counts[String(result)] ?? 0) + 1;
  return counts;
}

/** The sample lines of a metric family. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`));
}

interface ServeProcess {
  url: string;
  port: number;
  process: ChildProcess;
  /** Everything it wrote: JSON logs on stdout, the start-up text on stderr. */
  output(): string;
  /** What it wrote on stderr: the start-up text and, should it crash, the crash. */
  stderr(): string;
}

/** `compplan serve` as a real process on a free port of its own; resolves once it listens. */
async function spawnServe(databaseUrl: string): Promise<ServeProcess> {
  const port = await freePort();
  const serving = spawn(
    process.execPath,
    [join(REPO_ROOT, 'bin', 'compplan.js'), 'serve', '--host', '127.0.0.1', '--port', String(port)],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: databaseUrl,
        RATE_LIMIT_PER_SECOND: '1000000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let stderr = '';
  serving.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  serving.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    stderr += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (serving.exitCode !== null) throw new Error(`compplan serve exited: ${output}`);
        return output.includes(`compplan is listening on ${url}`);
      },
      20_000,
      'compplan serve to listen',
    );
  } catch (error) {
    await stopProcess(serving);
    throw error;
  }
  return { url, port, process: serving, output: () => output, stderr: () => stderr };
}

function postgresUrl(database: DatabaseConfig): string {
  if (database.dialect !== 'postgres') throw new Error('a PostgreSQL database is expected');
  return database.url;
}

// Two throwaway clusters, started side by side: one to stop and start again, and one
// that stays up for the Redis and SIGTERM parts (each with a database of its own).
let outageCluster: PostgresCluster;
let steadyCluster: PostgresCluster;
beforeAll(async () => {
  const [outage, steady] = await Promise.allSettled([startPostgres(), startPostgres()]);
  // Whatever started is destroyed in afterAll, even when the other failed.
  if (outage.status === 'fulfilled') outageCluster = outage.value;
  if (steady.status === 'fulfilled') steadyCluster = steady.value;
  for (const result of [outage, steady]) if (result.status === 'rejected') throw result.reason;
});
afterAll(async () => {
  await Promise.all([outageCluster?.destroy(), steadyCluster?.destroy()]);
});

// The tests of each part run in order, as one story: the first PostgreSQL test leaves the
// cluster stopped and "serves again" starts it; Redis goes down and comes back likewise.
describe('PostgreSQL stopped, then started again', () => {
  let cluster: PostgresCluster;
  let server: TestServer;
  let serving: ServeProcess | undefined;
  let key: string;
  let unusedKey: string;
  // Load on the process: 30 workers, a key per 5 (under the bound of 8 in flight per key).
  const loadKeys: string[] = [];
  const apiPaths = [
    MERIT_CYCLES,
    cyclePath(CYCLE.annual2025),
    ratesPath(CYCLE.annual2025),
    employeesPath(CYCLE.annual2025),
  ];

  beforeAll(async () => {
    cluster = outageCluster;
    const database = await createDatabase(cluster, 'compplan_outage');
    server = await startTestServer({ database, dataSets: [acmeDataSet()] });
    key = await server.createKey(ACME);
    unusedKey = await server.createKey(ACME, 'not used before the outage');
    for (let i = 0; i < 6; i++) loadKeys.push(await server.createKey(ACME, `load ${i}`));
    // The same database served by the real program too: a crash is about the process.
    serving = await spawnServe(postgresUrl(database));
  });
  afterAll(async () => {
    if (serving) await stopProcess(serving.process);
    await server?.close();
  });

  it('answers only 200 or 503 (never 500, never a hang) while PostgreSQL shuts down under load, and the compplan process does not crash', async () => {
    const process_ = serving as ServeProcess;
    const bothServe = async () =>
      (await timedGet(server.url, MERIT_CYCLES, key)).status === 200 &&
      (await timedGet(process_.url, MERIT_CYCLES, key)).status === 200;
    const results: (number | string)[] = [];
    let loading = false;
    // A worker: the API paths one after another, until told to stop (bounded).
    const worker = async (url: string, paths: string[], workerKey: string) => {
      for (let i = 0; loading && i < 1_000; i++) {
        const path = paths[i % paths.length] as string;
        const answer = await timedGet(url, path, workerKey).catch((error: Error) => error);
        if (answer instanceof Error) {
          results.push(
            `${url === server.url ? 'app' : 'process'}: ${String(answer.cause ?? answer)}`,
          );
          await sleep(20);
        } else {
          results.push(answer.status);
          if (answer.ms >= ANSWER_WITHIN_MS)
            results.push(`${path} took ${Math.round(answer.ms)} ms`);
        }
      }
    };
    // Connections are cut at random points of their work: three shutdowns under load make
    // a crash on a connection error (which needs an unlucky moment) all but certain to show.
    for (let cycle = 1; cycle <= 3; cycle++) {
      if (cycle > 1) {
        await cluster.start();
        await waitFor(bothServe, ANSWER_WITHIN_MS, 'both servers to answer 200 again');
      }
      expect(await bothServe()).toBe(true);
      loading = true;
      const load = Promise.all([
        ...Array.from({ length: 5 }, () => worker(server.url, apiPaths, key)),
        ...Array.from({ length: 30 }, (_, n) =>
          worker(process_.url, [employeesPath(CYCLE.annual2025)], loadKeys[n % 6] as string),
        ),
      ]);
      await sleep(300);
      await cluster.stop();
      await sleep(300);
      loading = false;
      await load;
      const { exitCode } = process_.process;
      expect(
        exitCode,
        `cycle ${cycle}: exited ${exitCode}: ${process_.stderr().slice(-1_500)}`,
      ).toBeNull();
    }
    expect(results.length).toBeGreaterThan(100);
    expect(tally(results.filter((result) => result !== 200 && result !== 503))).toEqual({});
    expect(results.at(-1)).toBe(503);
  });

  it('answers every API endpoint 503 with Retry-After and the standard error body, within 5 s, while PostgreSQL is down', async () => {
    for (const path of apiPaths) {
      const answer = await timedGet(server.url, path, key);
      expect(answer.status, path).toBe(503);
      expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.headers.get('content-type')).toBe(JSON_TYPE);
      expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      // The exact body: no driver message, address, SQL or stack.
      expect(JSON.parse(answer.text)).toEqual(
        errorBody(path, 'Service Unavailable: the database cannot be reached', 503),
      );
    }
  });

  it('answers 503, never 401, to a valid key it has not cached while PostgreSQL is down', async () => {
    const answer = await timedGet(server.url, '/ping', unusedKey);
    expect(answer.status).toBe(503);
    expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(JSON.parse(answer.text)).toEqual(
      errorBody('/ping', 'Service Unavailable: the database cannot be reached', 503),
    );
  });

  it('reports /readyz 503 with database "down" while PostgreSQL is down; /healthz stays 200', async () => {
    const ready = await timedGet(server.url, '/readyz', null);
    expect(ready.status).toBe(503);
    expect(ready.ms).toBeLessThan(ANSWER_WITHIN_MS);
    expect(JSON.parse(ready.text)).toEqual({
      status: 'unavailable',
      database: 'down',
      rateLimitStore: 'local',
    });
    const live = await timedGet(server.url, '/healthz', null);
    expect(live.status).toBe(200);
    expect(live.text).toBe('{"status":"ok"}');
  });

  it('serves again within 5 s of PostgreSQL starting, without a restart of compplan', async () => {
    await cluster.start();
    const started = performance.now();
    const process_ = serving as ServeProcess;
    await waitFor(
      async () =>
        (await timedGet(server.url, MERIT_CYCLES, key)).status === 200 &&
        (await timedGet(process_.url, MERIT_CYCLES, key)).status === 200,
      ANSWER_WITHIN_MS,
      'the API to answer 200 again',
    );
    expect(performance.now() - started).toBeLessThan(ANSWER_WITHIN_MS);
    for (const url of [server.url, process_.url]) {
      for (const path of apiPaths) expect((await timedGet(url, path, key)).status, url).toBe(200);
    }
    expect((await timedGet(server.url, '/ping', unusedKey)).status).toBe(200);
    const ready = await timedGet(server.url, '/readyz', null);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({
      status: 'ready',
      database: 'up',
      rateLimitStore: 'local',
    });
  });

  it('logged the outage as warnings and never as a failed request, and exported no 500', async () => {
    const levels = server.logs.map((line) => line.level as number);
    expect(levels.filter((level) => level >= 50)).toEqual([]);
    expect(
      server.logs.some((line) => line.msg === 'database unavailable' && line.level === 40),
    ).toBe(true);
    const metrics = await server.app.metrics.registry.metrics();
    const serverErrors = samples(metrics, 'compplan_http_requests_total').filter((line) =>
      /status_code="5\d\d"/.test(line),
    );
    expect(serverErrors.filter((line) => !line.includes('status_code="503"'))).toEqual([]);
    expect(serverErrors.length).toBeGreaterThan(0);
  });
});

describe('Redis stopped, then started again', () => {
  let redis: RedisServer;
  let first: TestServer;
  let second: TestServer;
  // A third instance with a quota of 5, below the bound of 8 requests in flight per key:
  // a simultaneous burst over its quota meets the quota, not that bound.
  let small: TestServer;

  async function storeOf(server: TestServer): Promise<unknown> {
    const ready = await timedGet(server.url, '/readyz', null);
    return (JSON.parse(ready.text) as { rateLimitStore: unknown }).rateLimitStore;
  }
  /** Waits until every instance reports `state`; returns how long that took. */
  async function allUse(state: string, withinMs: number): Promise<number> {
    const started = performance.now();
    await waitFor(
      async () => {
        const states = await Promise.all([first, second, small].map(storeOf));
        return states.every((current) => current === state);
      },
      withinMs,
      `every instance to report rateLimitStore "${state}"`,
    );
    return performance.now() - started;
  }
  /**
   * `count` /ping requests with one key within a second, alternating over `servers`, in
   * waves of 4 (at most 4 in flight per instance, well under the bound of 8); sorted statuses.
   */
  async function inWaves(key: string, count: number, servers: TestServer[]): Promise<number[]> {
    const statuses: number[] = [];
    for (let sent = 0; sent < count; sent += 4) {
      const wave = Array.from({ length: Math.min(4, count - sent) }, (_, i) => {
        const server = servers[(sent + i) % servers.length] as TestServer;
        return timedGet(server.url, '/ping', key);
      });
      for (const answer of await Promise.all(wave)) statuses.push(answer.status);
    }
    return statuses.sort();
  }
  /** `count` simultaneous /ping requests with one key to one instance; sorted statuses. */
  async function atOnce(key: string, count: number, server: TestServer): Promise<number[]> {
    const answers = await Promise.all(
      Array.from({ length: count }, () => timedGet(server.url, '/ping', key)),
    );
    return answers.map((answer) => answer.status).sort();
  }
  const split = (ok: number, limited: number) => [
    ...Array<number>(ok).fill(200),
    ...Array<number>(limited).fill(429),
  ];
  const storeGauge = async (server: TestServer) =>
    samples(await server.app.metrics.registry.metrics(), 'compplan_rate_limit_store');

  beforeAll(async () => {
    redis = await startRedis();
    const database = await createDatabase(steadyCluster, 'compplan_redis');
    const options = { database, rateLimitPerSecond: 10, redisUrl: redis.url };
    first = await startTestServer({ ...options, dataSets: [acmeDataSet()] });
    second = await startTestServer(options);
    small = await startTestServer({ ...options, rateLimitPerSecond: 5 });
    await allUse('redis', 5_000);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await small?.close();
    await redis?.stop();
  });

  it('shares one key’s quota between two instances on one Redis: of 20 requests within a second over both, 10 answer 200', async () => {
    expect(await storeGauge(first)).toEqual([
      'compplan_rate_limit_store{state="local"} 0',
      'compplan_rate_limit_store{state="redis"} 1',
      'compplan_rate_limit_store{state="local-fallback"} 0',
    ]);
    expect(await inWaves(await first.createKey(ACME), 20, [first, second])).toEqual(split(10, 10));
  });

  it('keeps serving while Redis stops and after: /readyz reports "local-fallback", the gauge follows, one warning is logged', async () => {
    const key = await first.createKey(ACME);
    const stopping = redis.stop();
    const during: Answer[] = [];
    for (let i = 0; i < 8; i++) {
      during.push(await timedGet(first.url, '/ping', key));
      await sleep(10);
    }
    await stopping;
    expect(during.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    for (const answer of during) expect(answer.ms).toBeLessThan(1_000);

    await allUse('local-fallback', 3_000);
    const ready = await timedGet(first.url, '/readyz', null);
    expect(ready.status).toBe(200);
    expect(ready.text).toBe('{"status":"ready","database":"up","rateLimitStore":"local-fallback"}');
    const other = await first.createKey(ACME);
    for (const path of [MERIT_CYCLES, cyclePath(CYCLE.annual2025), '/ping']) {
      const answer = await timedGet(first.url, path, other);
      expect(answer.status, path).toBe(200);
      expect(answer.ms).toBeLessThan(1_000);
    }
    for (const server of [first, second]) {
      expect(await storeGauge(server)).toEqual([
        'compplan_rate_limit_store{state="local"} 0',
        'compplan_rate_limit_store{state="redis"} 0',
        'compplan_rate_limit_store{state="local-fallback"} 1',
      ]);
      expect(
        server.logs.filter(
          (line) =>
            line.level === 40 &&
            line.rateLimitStore === 'local-fallback' &&
            line.msg === 'Redis unavailable: rate limits are per instance until it is back',
        ),
      ).toHaveLength(1);
    }
  });

  it('still limits each instance while Redis is down: of 11 requests within a second, the 11th gets 429, on each instance', async () => {
    const key = await first.createKey(ACME);
    expect(await inWaves(key, 11, [first])).toEqual(split(10, 1));
    // The other instance counts for itself: the same key gets its own 10 there.
    expect(await inWaves(key, 11, [second])).toEqual(split(10, 1));
  });

  it('serves exactly its quota of a simultaneous burst from a new key while Redis is down: 5 of 6 answer 200', async () => {
    // Each new key's burst waits on one shared key lookup and then meets an empty window.
    for (let round = 1; round <= 3; round++) {
      const key = await first.createKey(ACME);
      expect(await atOnce(key, 6, small), `round ${round}`).toEqual(split(5, 1));
    }
  });

  it('returns to Redis within 5 s of its restart, and the instances share one quota again', async () => {
    await redis.start();
    expect(await allUse('redis', 5_000)).toBeLessThan(5_000);
    expect(await storeGauge(second)).toEqual([
      'compplan_rate_limit_store{state="local"} 0',
      'compplan_rate_limit_store{state="redis"} 1',
      'compplan_rate_limit_store{state="local-fallback"} 0',
    ]);
    expect(await inWaves(await first.createKey(ACME), 20, [first, second])).toEqual(split(10, 10));
    for (const server of [first, second]) {
      const connected = server.logs.filter(
        (line) =>
          line.level === 30 &&
          line.rateLimitStore === 'redis' &&
          line.msg === 'Redis connected: rate limits are shared by every instance',
      );
      // Once at start-up, once after the restart.
      expect(connected).toHaveLength(2);
    }
  });
});

interface Outcome {
  /** The request had been written to the socket before SIGTERM was sent. */
  sentBeforeSignal: boolean;
  /** Its answer (or error) came after SIGTERM was sent. */
  doneAfterSignal: boolean;
  /** 200 for a whole page; another status; or the socket error code. */
  result: number | string;
}

interface ShutdownRecord {
  outcomes: Outcome[];
  /** Exit code and signal, or null when the process still ran 12 s after SIGTERM. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  exitMs: number;
  output: string;
}

describe('SIGTERM under load', () => {
  // 20 distinct pages of 100: every request builds a whole page from the database.
  const EMPLOYEES = 2_000;
  const WORKERS = 50;
  // A key per 5 workers: under the bound of 8 requests in flight per key.
  const keys: string[] = [];
  let serving: ServeProcess | undefined;
  // The scenario runs once; each test below reads its record (and fails with its error).
  let scenario: Promise<ShutdownRecord>;

  /**
   * 50 workers walk the employee pages over kept-alive connections; SIGTERM is sent once
   * 100 requests have been answered; the workers go on until connections are refused.
   */
  async function loadThenSigterm(databaseUrl: string): Promise<ShutdownRecord> {
    const server = await spawnServe(databaseUrl);
    serving = server;
    const exited = once(server.process, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const agent = new Agent({ keepAlive: true, maxSockets: WORKERS });
    const outcomes: Outcome[] = [];
    let signalled = false;
    let stopLoad = false;

    const get = (path: string, key: string) =>
      new Promise<{ outcome: Outcome; cursor: string | null }>((resolve) => {
        const outcome: Outcome = { sentBeforeSignal: false, doneAfterSignal: false, result: '' };
        let settled = false;
        const finish = (result: number | string, cursor: string | null = null) => {
          if (settled) return;
          settled = true;
          outcome.result = result;
          outcome.doneAfterSignal = signalled;
          outcomes.push(outcome);
          resolve({ outcome, cursor });
        };
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port: server.port,
            path,
            agent,
            headers: { 'x-api-key': key },
            timeout: 15_000,
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('error', (error: NodeJS.ErrnoException) =>
              finish(error.code ?? error.message),
            );
            response.on('end', () => {
              if (response.statusCode !== 200) return finish(response.statusCode ?? 0);
              const page = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
                data: unknown[];
                nextCursor: string | null;
              };
              const whole = page.data.length === 100;
              finish(whole ? 200 : `200 with ${page.data.length} items`, page.nextCursor);
            });
          },
        );
        // 'finish': the request has been handed to the socket. Strict in the right
        // direction: a request counted as sent before the signal surely was.
        request.on('finish', () => {
          outcome.sentBeforeSignal = !signalled;
        });
        request.on('timeout', () => request.destroy(new Error('no answer within 15 s')));
        request.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
        request.end();
      });

    const firstPage = `${employeesPath(LARGE_CYCLE)}?limit=100`;
    const next = (cursor: string | null) =>
      cursor ? `${firstPage}&nextCursor=${encodeURIComponent(cursor)}` : firstPage;
    const worker = async (key: string) => {
      let path = firstPage;
      for (let i = 0; !stopLoad && i < 5_000; i++) {
        const { outcome, cursor } = await get(path, key);
        if (outcome.result === 'ECONNREFUSED') return;
        path = next(cursor);
      }
    };
    const load = Promise.all(
      Array.from({ length: WORKERS }, (_, n) => worker(keys[n % keys.length] as string)),
    );
    try {
      await waitFor(async () => outcomes.length >= 100, 15_000, '100 answered requests');
      signalled = true;
      const signalledAt = performance.now();
      process.kill(server.process.pid as number, 'SIGTERM');
      // Bounded: a process still running 12 s after the signal is recorded as such.
      const ended = await Promise.race([exited, sleep(12_000).then(() => null)]);
      const exitMs = performance.now() - signalledAt;
      return {
        outcomes,
        exit: ended && { code: ended[0], signal: ended[1] },
        exitMs,
        output: server.output(),
      };
    } finally {
      stopLoad = true;
      await load;
      agent.destroy();
    }
  }

  beforeAll(async () => {
    const database = await createDatabase(steadyCluster, 'compplan_sigterm');
    const loader = await startTestServer({ database, dataSets: [largeCycleDataSet(EMPLOYEES)] });
    for (let i = 0; i < WORKERS / 5; i++) keys.push(await loader.createKey(ACME, `load ${i}`));
    await loader.close();
    scenario = loadThenSigterm(postgresUrl(database));
    scenario.catch(() => undefined);
  });
  afterAll(async () => {
    if (serving) await stopProcess(serving.process);
  });

  const sentBefore = (record: ShutdownRecord) =>
    record.outcomes.filter((outcome) => outcome.sentBeforeSignal);
  const sentAfter = (record: ShutdownRecord) =>
    record.outcomes.filter((outcome) => !outcome.sentBeforeSignal);
  const results = (outcomes: Outcome[]) => tally(outcomes.map((outcome) => outcome.result));
  const summary = (record: ShutdownRecord) =>
    `sent before SIGTERM: ${JSON.stringify(results(sentBefore(record)))}, ` +
    `in flight at SIGTERM: ${JSON.stringify(results(sentBefore(record).filter((o) => o.doneAfterSignal)))}, ` +
    `sent after: ${JSON.stringify(results(sentAfter(record)))}`;

  it('exits 0 within the 10 s grace period after SIGTERM under load', async () => {
    const record = await scenario;
    expect(record.exit, record.output.slice(-2_000)).toEqual({ code: 0, signal: null });
    expect(record.exitMs).toBeLessThan(10_000);
  });

  it('answers 200, with a whole page, to every request sent before SIGTERM, including those in flight', async () => {
    const record = await scenario;
    const before = sentBefore(record);
    // The signal met requests in flight, or this proves nothing.
    expect(before.filter((o) => o.doneAfterSignal).length, summary(record)).toBeGreaterThanOrEqual(
      WORKERS / 2,
    );
    expect(results(before), summary(record)).toEqual({ '200': before.length });
  });

  it('refuses new connections once it has stopped listening', async () => {
    const record = await scenario;
    const refused = sentAfter(record).filter((outcome) => outcome.result === 'ECONNREFUSED');
    expect(refused.length, summary(record)).toBeGreaterThan(0);
  });

  it('serves a request that reaches it on an open connection during the drain (200), never 503', async () => {
    // Besides 200 and refused: a reset, when a kept-alive connection is closed while idle
    // just as the client reuses it (the request never reached compplan; a GET is retried).
    const record = await scenario;
    const allowed = new Set<number | string>([200, 'ECONNREFUSED', 'ECONNRESET']);
    const others = sentAfter(record).filter((outcome) => !allowed.has(outcome.result));
    expect(results(others), summary(record)).toEqual({});
  });

  it('logs nothing at error level while shutting down', async () => {
    const record = await scenario;
    expect(record.output).not.toMatch(/"level":(50|60)/);
  });
});
