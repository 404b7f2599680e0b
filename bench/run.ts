// npm run bench — the API benchmark (docs/benchmarks.md); not part of npm test.
//
//   npm run bench                                   # SQLite and PostgreSQL, 3 runs of 3 s
//   npm run bench -- --databases sqlite --runs 5 --duration 5
//   npm run bench -- --report FILE                 # saved results rendered again, measuring nothing
//   npm run bench -- --help
//
// For each database:
// 1. The data set of `npm run bench:data` (1,000,000 employees in 200 cycles over 20
//    organisations, plus a cycle of 500,000): SQLite from --sqlite (loaded first when it
//    has no data), PostgreSQL in a throwaway cluster (test/helpers/services/postgres.ts)
//    loaded by bench:data. --employees/--deep size what is loaded.
// 2. --keys API keys per organisation used, through the key service; every request takes
//    the next key, so that the per-key quota (10 a second, as in production) never limits:
//    5,000 keep each key under 10 a second up to 50,000 req/s. At most half the server's
//    key cache (both organisations' keys must stay in it, or requests would wait for key
//    lookups). Any answer but 2xx fails the run's first target.
// 3. compplan (bench/server.js: the built app on 127.0.0.1, LOG_LEVEL=warn) in four
//    modes: the limiter on in process (production with no REDIS_URL), on with a throwaway
//    redis-server (REDIS_URL), off (BENCH_LIMITER=off), and on with the response cache
//    off (BENCH_CACHE=off: every answer built from the database); both switches are
//    bench/server.js's only.
// 4. The Node ceiling (bench/ceiling.js): a bare node:http server that answers each URL
//    with the bytes compplan answered it with (status, headers, body), doing nothing else.
// 5. autocannon, --connections connections, per scenario and run: compplan (after
//    --warm-up seconds of unmeasured load, so that its steady state is measured), then
//    the ceiling, interleaved, so that the machine's load (shared, noisy) hits both
//    alike. Medians over --runs runs. The server's resident memory is sampled throughout.
//    After each run's scenarios, page 1 and the deep page load the limiter-on server at
//    once, half of the connections each: the deep-page target compares p99s measured in
//    the same seconds.
// 6. docs/benchmarks.md (the part between its api-bench markers) and docs/benchmarks.svg.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createApiKey } from '../src/modules/api-keys/service.js';
import { KEY_CACHE_MAX_ENTRIES } from '../src/modules/api-keys/verifier.js';
import { CursorCodec } from '../src/pagination/cursor.js';
import { rawRequest } from '../test/helpers/api-expectations.js';
import { deployedNodeFlags } from '../test/helpers/services/compplan.js';
import { startPostgres } from '../test/helpers/services/postgres.js';
import { freePort, stopProcess, waitFor } from '../test/helpers/services/process.js';
import { redisAvailable, startRedis } from '../test/helpers/services/redis.js';
import { DEEP_CYCLE, DEEP_ORGANIZATION, organizationSlug } from './data.js';
import { parseFlags, wholeNumberFlag } from './options.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LIST = '/v1/compensationPlanning/meritCycles';
const FIRST_CYCLE = 'mc_00000001-0000-4000-8000-000000000001';
const DEEP_PAGES = 50; // distinct pages around page 5,000: a walk, not one cached page

const { values: args } = parseFlags({
  options: {
    databases: { type: 'string', default: 'sqlite,postgres' },
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    'warm-up': { type: 'string', default: '1' },
    connections: { type: 'string', default: '50' },
    keys: { type: 'string', default: '5000' },
    sqlite: { type: 'string', default: join(ROOT, 'data', 'bench.db') },
    employees: { type: 'string', default: '1000000' },
    deep: { type: 'string', default: '500000' },
    'deep-page': { type: 'string', default: '5000' },
    out: { type: 'string', default: join(ROOT, 'docs', 'benchmarks.md') },
    // Renders docs/benchmarks.md again from the results file of a run, measuring nothing.
    report: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), 'utf8').split('import ')[0] ?? '',
  );
  process.exit(0);
}
const RUNS = wholeNumberFlag('runs', args.runs, 1);
const DURATION = wholeNumberFlag('duration', args.duration, 1);
const WARM_UP = wholeNumberFlag('warm-up', args['warm-up'], 0);
const CONNECTIONS = wholeNumberFlag('connections', args.connections, 1);
// The keys of the two organisations used must all fit the server's cache of keys.
const KEYS = wholeNumberFlag('keys', args.keys, 1, Math.floor(KEY_CACHE_MAX_ENTRIES / 2));
const EMPLOYEES = wholeNumberFlag('employees', args.employees, 1);
const DEEP = wholeNumberFlag('deep', args.deep, 1);
const DEEP_PAGE = wholeNumberFlag('deep-page', args['deep-page'], DEEP_PAGES);

type Mode = 'limiter on' | 'limiter on (Redis)' | 'limiter off' | 'limiter on, no cache';
interface Scenario {
  name: string;
  org: 'first' | 'deep';
  paths: string[];
  /** Accept-Encoding of every request; absent: none, as autocannon sends by default. */
  acceptEncoding?: string;
  /**
   * Server modes measured: every scenario with the limiter on (production); the limiter's
   * cost and the pages without the response cache on a few.
   */
  modes: Mode[];
}
interface Measure {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time (user + system) the server process spent per request answered, µs. */
  cpuPerRequest?: number;
}
/**
 * Page 1 and the deep page loaded at once on the limiter-on server, half of the
 * connections each: their p99s measured in the same seconds, which the machine's load
 * cannot favour one of (measured apart, the two are a minute apart in every run).
 */
interface Together {
  page1: Measure[];
  deep: Measure[];
}
interface Row {
  database: string;
  scenario: string;
  mode: Mode;
  runs: Measure[];
  ceiling: Measure[];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

function log(message: string) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** What the ceiling (bench/ceiling.js) answers for one URL: compplan's answer, captured. */
interface CapturedResponse {
  url: string;
  /** The Accept-Encoding it was asked with ('identity': none). */
  acceptEncoding: string;
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

/** Runs a script of bench/: the servers are plain JavaScript, the rest TypeScript (tsx). */
function node(
  script: string,
  scriptArgs: string[],
  env: Record<string, string>,
  nodeFlags: string[] = [],
): ChildProcess {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  return spawn(process.execPath, [...nodeFlags, ...loader, join(ROOT, script), ...scriptArgs], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function started(child: ChildProcess, what: string): Promise<ChildProcess> {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await waitFor(async () => output.includes('listening'), 30_000, what);
  return child;
}

async function runToEnd(child: ChildProcess, what: string) {
  child.stdout?.pipe(process.stderr);
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${what} exited with ${code}`);
}

function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

async function hasBenchData(database: DatabaseHandle): Promise<boolean> {
  const row = await database.db
    .selectFrom('organizations')
    .select('id')
    .where('slug', '=', DEEP_ORGANIZATION)
    .executeTakeFirst()
    .catch(() => undefined);
  return row !== undefined;
}

async function prepare(databaseUrl: string) {
  const database = openDatabase(
    databaseUrl.startsWith('sqlite:')
      ? { dialect: 'sqlite', path: databaseUrl.slice('sqlite:'.length) }
      : { dialect: 'postgres', url: databaseUrl },
  );
  await migrateToLatest(database);
  if (!(await hasBenchData(database))) {
    log(`loading the data set into ${databaseUrl.split(':')[0]} (npm run bench:data)…`);
    const loadStarted = performance.now();
    await runToEnd(
      node(
        'bench/data.ts',
        [
          '--employees',
          String(EMPLOYEES),
          '--deep',
          String(DEEP),
          '--database',
          databaseUrl,
          '--only-load',
        ],
        {},
      ),
      'bench:data',
    );
    log(`loaded in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s`);
  }
  if (database.dialect === 'postgres') {
    // A cluster just loaded has its vacuum ahead of it: autovacuum would set the hint
    // bits and visibility map of 1,500,000 new rows while the servers are measured, on
    // the same two cores. Done now, so that the runs measure the API, not the cleanup.
    const vacuumStarted = performance.now();
    await sql`vacuum (analyze)`.execute(database.db);
    await sql`checkpoint`.execute(database.db);
    log(`vacuumed in ${((performance.now() - vacuumStarted) / 1000).toFixed(0)} s`);
  }
  const orgs = { first: organizationSlug(0), deep: DEEP_ORGANIZATION };
  const keys = { first: [] as string[], deep: [] as string[] };
  for (const which of ['first', 'deep'] as const) {
    for (let i = 0; i < KEYS; i++) {
      keys[which].push(
        (await createApiKey(database.db, { org: orgs[which], name: `bench ${i}` })).key,
      );
    }
  }
  // Cursors of pages DEEP_PAGE - DEEP_PAGES + 1 … DEEP_PAGE of the deep cycle (page 5,000
  // of 500,000 employees is its last), as the server issues them: the sort key of the last
  // employee of the page before, signed.
  const secret = await database.db
    .selectFrom('server_secrets')
    .select('value')
    .where('name', '=', 'cursor-signing-key')
    .executeTakeFirstOrThrow();
  const codec = new CursorCodec(Buffer.from(secret.value, 'base64url'));
  const deepOrg = await database.db
    .selectFrom('organizations')
    .select('id')
    .where('slug', '=', DEEP_ORGANIZATION)
    .executeTakeFirstOrThrow();
  const offset = (DEEP_PAGE - DEEP_PAGES) * 100 - 1;
  const rows = await sql<{ id: string; last_name: string; first_name: string }>`
    select id, last_name, first_name from merit_cycle_employees
    where organization_id = ${deepOrg.id} and merit_cycle_id = ${DEEP_CYCLE}
    order by last_name, first_name, id limit ${DEEP_PAGES * 100} offset ${offset}`.execute(
    database.db,
  );
  const deepPaths = rows.rows
    .filter((_, index) => index % 100 === 0)
    .map((row) => {
      const cursor = codec.encode(
        { endpoint: 'employees', reader: deepOrg.id, meritCycleId: DEEP_CYCLE },
        {},
        [row.last_name, row.first_name, row.id],
      );
      return `${LIST}/${DEEP_CYCLE}/employees?limit=100&nextCursor=${cursor}`;
    });
  if (deepPaths.length < DEEP_PAGES)
    throw new Error(`the deep cycle has fewer than ${DEEP_PAGE} pages of 100`);
  await database.db.destroy();
  return { keys, deepPaths };
}

function scenarios(deepPaths: string[]): Scenario[] {
  const all: Mode[] = ['limiter on', 'limiter on (Redis)', 'limiter off'];
  return [
    { name: 'ping', org: 'first', paths: ['/ping'], modes: all },
    {
      name: 'get one cycle',
      org: 'first',
      paths: [`${LIST}/${FIRST_CYCLE}`],
      modes: ['limiter on'],
    },
    { name: 'list cycles', org: 'first', paths: [LIST], modes: ['limiter on'] },
    {
      name: 'employees page 1 (limit 100)',
      org: 'first',
      paths: [`${LIST}/${FIRST_CYCLE}/employees?limit=100`],
      modes: [...all, 'limiter on, no cache'],
    },
    {
      // What most clients ask for (browsers, curl --compressed, Python's requests, fetch):
      // the answer is sent brotli-compressed.
      name: 'compressed employees page 1 (limit 100; Accept-Encoding: gzip, deflate, br)',
      org: 'first',
      paths: [`${LIST}/${FIRST_CYCLE}/employees?limit=100`],
      acceptEncoding: 'gzip, deflate, br',
      modes: ['limiter on', 'limiter on, no cache'],
    },
    {
      name: `deep employees page (pages ${(DEEP_PAGE - DEEP_PAGES + 1).toLocaleString('en')}–${DEEP_PAGE.toLocaleString('en')}, limit 100)`,
      org: 'deep',
      paths: deepPaths,
      modes: ['limiter on', 'limiter on, no cache'],
    },
    {
      name: 'exchange rates',
      org: 'first',
      paths: [`${LIST}/${FIRST_CYCLE}/exchangeRates`],
      modes: ['limiter on'],
    },
  ];
}

/** CPU time (user + system) a process has used so far, µs; 0 once it is gone. */
function cpuMicros(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // Fields after the command name (which may hold spaces): utime is the 12th, stime the
    // 13th, in clock ticks (100 a second on Linux).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}

async function load(
  url: string,
  scenario: Scenario,
  keys: string[],
  seconds: number,
  serverPid?: number,
  connections = CONNECTIONS,
): Promise<Measure> {
  const { paths, acceptEncoding } = scenario;
  let i = 0;
  const cpuBefore = cpuMicros(serverPid);
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          i++;
          request.path = paths[i % paths.length] ?? '/';
          request.headers = {
            'x-api-key': keys[i % keys.length] ?? '',
            ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
          };
          return request;
        },
      },
    ],
  });
  const r = result as unknown as {
    requests: { average: number; total: number };
    non2xx: number;
  };
  const cpu = cpuMicros(serverPid) - cpuBefore;
  return {
    ...(serverPid !== undefined && r.requests.total > 0
      ? { cpuPerRequest: cpu / r.requests.total }
      : {}),
    rps: r.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: r.non2xx,
    errors: result.errors + result.timeouts,
  };
}

async function capture(
  base: string,
  scenario: Scenario,
  keys: string[],
): Promise<CapturedResponse[]> {
  const out: CapturedResponse[] = [];
  const acceptEncoding = scenario.acceptEncoding ?? 'identity';
  for (const [index, url] of scenario.paths.entries()) {
    const key = keys[index % keys.length] ?? '';
    // node:http, not fetch: fetch would undo the encoding, and the ceiling would send the
    // decoded bytes under compplan's Content-Encoding.
    const response = await rawRequest(base, url, {
      headers: { 'x-api-key': key, 'accept-encoding': acceptEncoding },
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (
        typeof value === 'string' &&
        !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)
      )
        headers[name] = value;
    }
    const body = response.body;
    headers['content-length'] = String(body.length);
    out.push({
      url,
      acceptEncoding,
      status: response.status,
      headers,
      body: body.toString('base64'),
    });
  }
  return out;
}

async function benchDatabase(label: string, databaseUrl: string, redisUrl: string | undefined) {
  const { keys, deepPaths } = await prepare(databaseUrl);
  const list = scenarios(deepPaths);
  const modes: Mode[] = redisUrl
    ? ['limiter on', 'limiter on (Redis)', 'limiter off', 'limiter on, no cache']
    : ['limiter on', 'limiter off', 'limiter on, no cache'];
  const servers = new Map<Mode, { child: ChildProcess; url: string; peakRss: number }>();
  const work = mkdtempSync(join(tmpdir(), 'compplan-bench-'));
  let ceiling: ChildProcess | undefined;
  try {
    for (const mode of modes) {
      const port = await freePort();
      const env: Record<string, string> = {
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_SECOND: '10',
        ...(mode === 'limiter off' ? { BENCH_LIMITER: 'off' } : {}),
        ...(mode === 'limiter on, no cache' ? { BENCH_CACHE: 'off' } : {}),
        ...(mode === 'limiter on (Redis)' && redisUrl ? { REDIS_URL: redisUrl } : {}),
      };
      const child = await started(
        node('bench/server.js', [], env, deployedNodeFlags()),
        `compplan (${mode})`,
      );
      servers.set(mode, { child, url: `http://127.0.0.1:${port}`, peakRss: 0 });
    }
    const onServer = servers.get('limiter on');
    if (!onServer) throw new Error('no limiter-on server');
    // The ceiling answers with exactly what compplan answered.
    const captured: CapturedResponse[] = [];
    for (const scenario of list) {
      captured.push(...(await capture(onServer.url, scenario, keys[scenario.org])));
    }
    for (const response of captured) {
      if (response.status !== 200) throw new Error(`${response.url} answered ${response.status}`);
    }
    const capturedFile = join(work, 'captured.json');
    writeFileSync(capturedFile, JSON.stringify(captured));
    const ceilingPort = await freePort();
    ceiling = await started(
      node('bench/ceiling.js', [capturedFile, String(ceilingPort)], {}),
      'ceiling',
    );
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}`;

    // Memory sampled through the whole run.
    const sampler = setInterval(() => {
      for (const server of servers.values())
        server.peakRss = Math.max(server.peakRss, rssMiB(server.child.pid));
    }, 250);
    const rows: Row[] = [];
    const together: Together = { page1: [], deep: [] };
    const page1 = list.find((scenario) => scenario.name.startsWith('employees page 1'));
    const deep = list.find((scenario) => scenario.name.startsWith('deep'));
    try {
      log(`${label}: warm-up`);
      for (const scenario of list) {
        for (const mode of scenario.modes) {
          const server = servers.get(mode);
          if (server) await load(server.url, scenario, keys[scenario.org], 1);
        }
        await load(ceilingUrl, scenario, keys[scenario.org], 1);
      }
      for (const scenario of list) {
        for (const mode of scenario.modes) {
          if (servers.has(mode))
            rows.push({ database: label, scenario: scenario.name, mode, runs: [], ceiling: [] });
        }
      }
      for (let run = 1; run <= RUNS; run++) {
        for (const scenario of list) {
          for (const row of rows.filter((r) => r.scenario === scenario.name)) {
            const server = servers.get(row.mode);
            if (!server) continue;
            // Unmeasured load first, so that the run measures the server in its steady
            // state at this scenario, not its first second: since its last run it has
            // idled 20 s and more while the other servers and the ceiling ran (until
            // 0007, long enough for every key's answer to expire: the first second was
            // then a lookup of every key). The ceiling keeps nothing to warm.
            if (WARM_UP > 0) await load(server.url, scenario, keys[scenario.org], WARM_UP);
            row.runs.push(
              await load(server.url, scenario, keys[scenario.org], DURATION, server.child.pid),
            );
            row.ceiling.push(
              await load(ceilingUrl, scenario, keys[scenario.org], DURATION, ceiling?.pid),
            );
            const last = row.runs.at(-1);
            log(
              `${label} run ${run}/${RUNS} ${scenario.name} [${row.mode}]: ${last?.rps.toFixed(0)} req/s, p99 ${last?.p99} ms; ceiling ${row.ceiling.at(-1)?.rps.toFixed(0)} req/s`,
            );
          }
        }
        if (page1 && deep) {
          const half = Math.ceil(CONNECTIONS / 2);
          const both = (seconds: number) =>
            Promise.all([
              load(onServer.url, page1, keys.first, seconds, undefined, half),
              load(onServer.url, deep, keys.deep, seconds, undefined, CONNECTIONS - half),
            ]);
          if (WARM_UP > 0) await both(WARM_UP);
          const [first, last] = await both(DURATION);
          together.page1.push(first);
          together.deep.push(last);
          log(
            `${label} run ${run}/${RUNS} page 1 and the deep page together: p99 ${first.p99} and ${last.p99} ms`,
          );
        }
      }
    } finally {
      clearInterval(sampler);
    }
    const peakRss = Object.fromEntries(
      [...servers].map(([mode, server]) => [mode, server.peakRss]),
    ) as Record<Mode, number>;
    return { rows, peakRss, together };
  } finally {
    if (ceiling) await stopProcess(ceiling);
    for (const server of servers.values()) await stopProcess(server.child);
    rmSync(work, { recursive: true, force: true });
  }
}

interface Summary {
  database: string;
  scenario: string;
  mode: Mode;
  rps: number;
  p50: number;
  p99: number;
  ceilingRps: number;
  ceilingP99: number;
  ratio: number;
  /** Server CPU per request, µs: compplan's and the ceiling's (undefined in old results). */
  cpu: number | undefined;
  ceilingCpu: number | undefined;
  failures: number;
}

/** The median of the values measured; undefined when none was (results of older runs). */
function medianOf(values: (number | undefined)[]): number | undefined {
  const measured = values.filter((value): value is number => value !== undefined);
  return measured.length ? median(measured) : undefined;
}

function summarize(rows: Row[]): Summary[] {
  return rows.map((row) => {
    const rps = median(row.runs.map((m) => m.rps));
    const ceilingRps = median(row.ceiling.map((m) => m.rps));
    return {
      database: row.database,
      scenario: row.scenario,
      mode: row.mode,
      rps,
      p50: median(row.runs.map((m) => m.p50)),
      p99: median(row.runs.map((m) => m.p99)),
      ceilingRps,
      ceilingP99: median(row.ceiling.map((m) => m.p99)),
      ratio: median(row.runs.map((m, i) => m.rps / (row.ceiling[i]?.rps ?? 1))),
      cpu: medianOf(row.runs.map((m) => m.cpuPerRequest)),
      ceilingCpu: medianOf(row.ceiling.map((m) => m.cpuPerRequest)),
      failures: row.runs.reduce((sum, m) => sum + m.non2xx + m.errors, 0),
    };
  });
}

function chart(summaries: Summary[]): string {
  const bars = summaries.filter((s) => s.mode === 'limiter on');
  const barHeight = 18;
  const gap = 6;
  const left = 330;
  const width = 760;
  const scale = (width - left - 60) / 1;
  const height = 50 + bars.length * (barHeight + gap) + 30;
  const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12" role="img">`,
    '<title>compplan throughput as a share of the Node ceiling, per scenario and database</title>',
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">compplan req/s as a share of the Node ceiling (limiter on, medians)</text>`,
  ];
  bars.forEach((bar, index) => {
    const y = 40 + index * (barHeight + gap);
    const w = Math.max(1, Math.min(1, bar.ratio) * scale);
    const fill = bar.database === 'SQLite' ? '#4C78A8' : '#F58518';
    parts.push(
      `<text x="${left - 8}" y="${y + 13}" text-anchor="end">${xml(`${bar.database}: ${bar.scenario}`)}</text>`,
    );
    parts.push(
      `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${fill}"/>`,
    );
    parts.push(
      `<text x="${(left + w + 4).toFixed(1)}" y="${y + 13}">${(bar.ratio * 100).toFixed(0)} %</text>`,
    );
  });
  const target = left + 0.4 * scale;
  const bottom = 40 + bars.length * (barHeight + gap);
  parts.push(
    `<line x1="${target}" y1="34" x2="${target}" y2="${bottom}" stroke="#d62728" stroke-dasharray="4 3"/>`,
  );
  parts.push(
    `<text x="${target + 4}" y="${bottom + 16}" fill="#d62728">40 % target (employees page)</text>`,
  );
  parts.push(`<line x1="${left}" y1="34" x2="${left}" y2="${bottom}" stroke="#333"/>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function report(summaries: Summary[], saved: Saved) {
  const { peakRss, machine, took, command } = saved;
  const method = methodOf(saved);
  const fmt = (n: number) => n.toLocaleString('en', { maximumFractionDigits: 0 });
  const ms = (n: number) => n.toFixed(n < 10 ? 1 : 0);
  const lines: string[] = [];
  lines.push(
    '| Database | Scenario | Server | req/s | p50 ms | p99 ms | Ceiling req/s | Ceiling p99 ms | Ratio | CPU µs/request (ceiling) | Non-2xx/errors |',
  );
  lines.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  const cpu = (s: Summary) =>
    s.cpu === undefined || s.ceilingCpu === undefined
      ? '–'
      : `${fmt(s.cpu)} (${fmt(s.ceilingCpu)})`;
  for (const s of summaries) {
    lines.push(
      `| ${s.database} | ${s.scenario} | ${s.mode} | ${fmt(s.rps)} | ${ms(s.p50)} | ${ms(s.p99)} | ${fmt(s.ceilingRps)} | ${ms(s.ceilingP99)} | ${(s.ratio * 100).toFixed(0)} % | ${cpu(s)} | ${s.failures} |`,
    );
  }
  const header = ['| Target | Database | Measured | Met |', '|---|---|---|---|'];
  // The issue's targets, on its scenarios as production serves them (a page read again
  // comes from the response cache); then the same targets for the pages with every answer
  // built from the database, as a client's first read of each page is.
  const targets: string[] = [...header];
  const built: string[] = [...header];
  const find = (database: string, prefix: string, mode: Mode) =>
    summaries.find(
      (s) => s.database === database && s.scenario.startsWith(prefix) && s.mode === mode,
    );
  const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
  const pageTargets = (database: string, mode: Mode, rows: string[]) => {
    const page = find(database, 'employees page 1', mode);
    const deep = find(database, 'deep', mode);
    if (page)
      rows.push(
        `| Employees page of 100 ≥ 40 % of the ceiling's req/s | ${database} | ${(page.ratio * 100).toFixed(0)} % | ${yes(page.ratio >= 0.4)} |`,
      );
    const apart =
      page && deep
        ? `${ms(deep.p99)} ms vs ${ms(page.p99)} ms (${(deep.p99 / page.p99).toFixed(2)}×; the ceiling's ${ms(deep.ceilingP99)} vs ${ms(page.ceilingP99)} ms)`
        : undefined;
    const measuredTogether = mode === 'limiter on' ? saved.together?.[database] : undefined;
    if (measuredTogether?.page1.length && measuredTogether.deep.length) {
      // The target is read from the pages measured together; apart, for comparison.
      const deepP99 = median(measuredTogether.deep.map((m) => m.p99));
      const pageP99 = median(measuredTogether.page1.map((m) => m.p99));
      rows.push(
        `| Deep page p99 ≤ 1.2 × page-1 p99 | ${database} | ${ms(deepP99)} ms vs ${ms(pageP99)} ms (${(deepP99 / pageP99).toFixed(2)}×), measured together (${Math.ceil(method.connections / 2)} connections each, one server, the same seconds)${apart ? `; apart ${apart}` : ''} | ${yes(deepP99 <= 1.2 * pageP99)} |`,
      );
    } else if (page && deep && apart) {
      rows.push(
        `| Deep page p99 ≤ 1.2 × page-1 p99 | ${database} | ${apart} | ${yes(deep.p99 <= 1.2 * page.p99)} |`,
      );
    }
  };
  const p99Target = (database: string, mode: Mode, served: string, rows: string[]) => {
    const worst = summaries
      .filter((s) => s.database === database && s.mode === mode)
      .sort((a, b) => b.p99 - a.p99)[0];
    if (worst)
      rows.push(
        `| p99 ≤ 20 ms at ${method.connections} connections (${served}) | ${database} | worst ${ms(worst.p99)} ms (${worst.scenario}) | ${yes(worst.p99 <= 20)} |`,
      );
  };
  // A run with any answer but 2xx measured something else: a 429 is the quota (too few
  // keys for the req/s), an error the server or the machine. No target of it counts.
  const allAnswered = (database: string) => {
    const failed = summaries
      .filter((s) => s.database === database && s.failures > 0)
      .map((s) => `${s.scenario} [${s.mode}]: ${fmt(s.failures)}`);
    const measuredTogether = saved.together?.[database];
    const togetherFailures = [
      ...(measuredTogether?.page1 ?? []),
      ...(measuredTogether?.deep ?? []),
    ].reduce((sum, m) => sum + m.non2xx + m.errors, 0);
    if (togetherFailures > 0)
      failed.push(`page 1 and the deep page together: ${fmt(togetherFailures)}`);
    targets.push(
      `| Every answer 2xx, no errors (a 429 would measure the quota, not the server) | ${database} | ${failed.length ? failed.join('; ') : 'none in any run'} | ${yes(failed.length === 0)} |`,
    );
  };
  for (const database of [...new Set(summaries.map((s) => s.database))]) {
    allAnswered(database);
    pageTargets(database, 'limiter on', targets);
    pageTargets(database, 'limiter on, no cache', built);
    for (const scenario of ['ping', 'employees page 1']) {
      const on = find(database, scenario, 'limiter on');
      const off = find(database, scenario, 'limiter off');
      const redis = find(database, scenario, 'limiter on (Redis)');
      // Each mode's req/s is taken as its share of the ceiling run right after it, so that
      // the machine's load at that moment cancels out; the raw req/s are shown too.
      const share = (s: Summary) => `${(s.ratio * 100).toFixed(0)} %`;
      if (on && off) {
        const cost = 1 - on.ratio / off.ratio;
        targets.push(
          `| Limiter cost in process ≤ 10 % (${scenario}) | ${database} | ${(cost * 100).toFixed(1)} % (${share(on)} vs ${share(off)} of the ceiling; ${fmt(on.rps)} vs ${fmt(off.rps)} req/s) | ${yes(cost <= 0.1)} |`,
        );
      }
      if (redis && off) {
        const cost = 1 - redis.ratio / off.ratio;
        targets.push(
          `| Limiter cost with Redis ≤ 20 % (${scenario}) | ${database} | ${(cost * 100).toFixed(1)} % (${share(redis)} vs ${share(off)} of the ceiling; ${fmt(redis.rps)} vs ${fmt(off.rps)} req/s) | ${yes(cost <= 0.2)} |`,
        );
      }
    }
    p99Target(database, 'limiter on', 'every scenario, limiter on', targets);
    p99Target(database, 'limiter on, no cache', 'the pages, every answer built', built);
    const rss = Math.max(...Object.values(peakRss[database] ?? {}));
    targets.push(
      `| Server RSS under load ≤ 200 MB (every server) | ${database} | peak ${rss.toFixed(0)} MiB (${Object.entries(
        peakRss[database] ?? {},
      )
        .map(([mode, value]) => `${mode} ${value.toFixed(0)}`)
        .join(', ')}) | ${yes(rss * 1.048576 <= 200)} |`,
    );
  }
  return [
    `Generated by \`${command}\` (bench/run.ts) in ${Math.round(took / 60)} minutes.`,
    '',
    `Machine: ${machine}.`,
    '',
    '### Targets',
    '',
    "The issue's scenarios as production serves them: the response cache on, so that a page read again is sent from memory.",
    '',
    ...targets,
    '',
    '### The pages with every answer built',
    '',
    'The same targets for the employees pages with the response cache off (*limiter on, no cache*): every answer read from the database, as the first read of each page is. Not scenarios of the issue; measured so that what a cache miss costs is on the table too.',
    '',
    ...built,
    '',
    '### Every scenario',
    '',
    `Medians of ${method.runs} runs of ${method.duration} s, ${method.connections} connections, each compplan run (${method.warmUp === undefined ? 'its warm-up not recorded in these results' : `after ${method.warmUp} s of unmeasured load on it`}) followed at once by a ceiling run of the same scenario (ratio: the median of the per-run ratios). Ceiling p99: the latency the load generator and the machine give the same bytes sent with no work at all, the floor under compplan's p99. CPU µs/request: the CPU time (user + system, from /proc) the server process spent per request answered, compplan's and, in brackets, the ceiling's; it moves less with the machine's load than req/s does, and leaves out PostgreSQL's and Redis's own processes. Non-2xx must be 0: any 429 would mean the quota, not the server, was measured.`,
    '',
    ...lines,
    '',
    '![req/s as a share of the Node ceiling](benchmarks.svg)',
  ].join('\n');
}

function writeReport(section: string) {
  const start =
    '<!-- api-bench:start (generated by npm run bench; edits between these markers are overwritten) -->';
  const end = '<!-- api-bench:end -->';
  const file = args.out;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n\n## API\n\n';
  const from = current.indexOf('<!-- api-bench:start');
  const to = current.indexOf(end);
  const block = `${start}\n${section}\n${end}`;
  const next =
    from >= 0 && to > from
      ? `${current.slice(0, from)}${block}${current.slice(to + end.length)}`
      : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}

/** How the results were measured: the flags of the run that measured them. */
interface Method {
  runs: number;
  duration: number;
  /** Undefined: not recorded (older results). */
  warmUp: number | undefined;
  connections: number;
}

interface Saved {
  rows: Row[];
  peakRss: Record<string, Record<Mode, number>>;
  machine: string;
  took: number;
  command: string;
  /** Missing in results saved before it was recorded. */
  method?: Method;
  /** By database; missing in results saved before it was measured. */
  together?: Record<string, Together>;
}

/**
 * How saved results were measured, whatever flags `--report` is given. Results saved
 * before it was recorded: the flags their command line shows, else the defaults, which
 * have not changed; the warm-up only when the command line gives it (its default was 0
 * before it became 1).
 */
function methodOf(saved: Saved): Method {
  if (saved.method) return saved.method;
  const flag = <T>(name: string, fallback: T) => {
    const value = new RegExp(`--${name}[ =](\\d+)`).exec(saved.command)?.[1];
    return value === undefined ? fallback : Number(value);
  };
  return {
    runs: saved.rows[0]?.runs.length ?? 0,
    duration: flag('duration', 3),
    warmUp: flag('warm-up', undefined),
    connections: flag('connections', 50),
  };
}

function render(saved: Saved): string {
  const summaries = summarize(saved.rows);
  const section = report(summaries, saved);
  writeReport(section);
  writeFileSync(join(args.out, '..', 'benchmarks.svg'), chart(summaries));
  return section;
}

async function main() {
  if (args.report) {
    process.stdout.write(`${render(JSON.parse(readFileSync(args.report, 'utf8')) as Saved)}\n`);
    return;
  }
  const began = performance.now();
  const load1 = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const databases = args.databases.split(',');
  const redis = (await redisAvailable()) ? await startRedis() : undefined;
  if (!redis) log('redis-server not found: the Redis mode is skipped');
  const rows: Row[] = [];
  const peakRss: Record<string, Record<Mode, number>> = {};
  const together: Record<string, Together> = {};
  try {
    for (const database of databases) {
      if (database === 'sqlite') {
        const result = await benchDatabase('SQLite', `sqlite:${args.sqlite}`, redis?.url);
        rows.push(...result.rows);
        peakRss.SQLite = result.peakRss;
        together.SQLite = result.together;
      } else if (database === 'postgres') {
        const cluster = await startPostgres();
        try {
          const result = await benchDatabase('PostgreSQL', cluster.url, redis?.url);
          rows.push(...result.rows);
          peakRss.PostgreSQL = result.peakRss;
          together.PostgreSQL = result.together;
        } finally {
          await cluster.destroy();
        }
      } else throw new Error(`unknown database ${database}`);
    }
  } finally {
    await redis?.stop();
  }
  const load2 = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const machine = `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${load1} at the start and ${load2} at the end (shared with other work: hence medians and interleaving)`;
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const saved: Saved = {
    rows,
    peakRss,
    machine,
    took: (performance.now() - began) / 1000,
    command,
    method: { runs: RUNS, duration: DURATION, warmUp: WARM_UP, connections: CONNECTIONS },
    together,
  };
  const resultsFile = join(tmpdir(), 'compplan-bench-results.json');
  writeFileSync(resultsFile, JSON.stringify(saved, null, 2));
  log(`results in ${resultsFile}; npm run bench -- --report ${resultsFile} renders them again`);
  process.stdout.write(`${render(saved)}\n`);
}

await main();
await sleep(0);
