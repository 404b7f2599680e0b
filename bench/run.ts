// npm run bench — the API benchmark (docs/benchmarks.md); not part of npm test. Needs wrk
// (apt-get install wrk) and, for PostgreSQL, PostgreSQL 15's binaries.
//
//   npm run bench                                  # SQLite and PostgreSQL, 3 rounds of 8 s
//   npm run bench -- --seconds 2 --rounds 1        # a quick look
//   npm run bench -- --only sqlite                 # one database (sqlite | postgres)
//   npm run bench -- --report FILE                 # saved results rendered again, measuring nothing
//   npm run bench -- --only-bulk [--bulk-employees N]  # only the bulk download (bench/bulk.ts)
//   npm run bench -- --only-slices [--slices-employees N]  # only the row slices (bench/slices.ts)
//   npm run bench -- --help
//
// What a user gets, measured through the command line, HTTP and /proc only. For each
// database:
// 1. The data set of `npm run bench:data -- --employees 2000 --deep 100000 --only-load`:
//    one organisation with one cycle of 100,000 employees (bench-deep), 20 more with 10
//    small cycles each, generated to files and loaded with `bin/compplan.js import FILE`
//    (executed, as users run it); SQLite in a temp dir, PostgreSQL in a throwaway cluster (vacuumed after the
//    load, so that autovacuum does not run while the servers are measured).
// 2. A key made with `node bin/compplan.js keys create --org bench-deep --json`.
// 3. `bin/compplan.js serve --port P --host 127.0.0.1` executed as `npm start` and `npx
//    compplan` execute it (with the V8 flags of its first line): the environment holds
//    only DATABASE_URL and RATE_LIMIT_PER_SECOND=1000000 (so that the quota is not what
//    is measured), LOG_LEVEL is its default (info), its standard output goes to a file.
// 4. A full delta walk of the deep cycle for its deltaToken, then the deep cycle imported
//    again with 1 % of its employees changed (`bench/data.ts --change-deep 1`, through
//    the command line): the delta from that token is what the delta scenario walks.
//    Each scenario's answers captured over HTTP (the walks' pages by following
//    nextCursor), then served by the ceiling (bench/ceiling.js): a bare node:http server
//    that replays, for each URL, the status, headers and body compplan sent.
// 5. wrk -t1 -c32 per scenario: compplan after --warm-up seconds of unmeasured load, then
//    --rounds rounds of --seconds seconds, compplan and the ceiling alternated. Any answer
//    that is not 2xx fails the scenario.
//    For `/ping` and the walk, the audit log's cost (docs/benchmarks.md): compplan and a
//    second `compplan serve` of the same build on the same database with the audit log
//    turned off for the measurement only (BENCH_AUDIT_LOG=off), after the scenario's
//    rounds, in 4 × --rounds pairs of short rounds (2 s, at most --seconds), one after the
//    other, the two taking turns to go first.
// 6. compplan's peak RSS (VmHWM of /proc/PID/status) after the scenarios.
// 7. Full reads of the deep cycle, one client reading every page, through REST (every
//    nextCursor) and through the OData feed (every @odata.nextLink), --rounds each,
//    alternated (bench/full-read.ts), from a third `compplan serve` of the same build,
//    settings and database, started for them: its peak RSS is what a BI tool's refresh
//    takes, not what the 32-connection scenarios left behind. Every server stopped by PID
//    (SIGTERM, then SIGKILL).
// The results are saved as JSON in the temp dir and rendered into docs/benchmarks.md,
// between its api-bench markers (bench/report.ts). Then the bulk download benchmark
// (bench/bulk.ts: a cycle of --bulk-employees, 1,000,000 by default, read whole by curl),
// written between its own markers; --only-bulk runs only that, --skip-bulk leaves it out.
// Before the bulk download, the row slices' benchmark (bench/slices.ts: sliced pages and
// downloads against unsliced ones of the same size, with the --seconds, --rounds and
// --warm-up of the API scenarios, on a data set of its own of --slices-employees, 100,000
// by default), written between its own markers; --only-slices runs only that,
// --skip-slices leaves it out.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPostgres } from '../test/helpers/services/postgres.js';
import { freePort, stopProcess, waitFor } from '../test/helpers/services/process.js';
import { benchBulk } from './bulk.js';
import { DEEP_CYCLE, DEEP_ORGANIZATION } from './data.js';
import { fullReads } from './full-read.js';
import { oneOfFlag, parseFlags, wholeNumberFlag } from './options.js';
import {
  AUDIT_SCENARIOS,
  type DatabaseName,
  type DatabaseResult,
  type Measure,
  type Results,
  renderReport,
  type ScenarioName,
  type ScenarioResult,
  writeReport,
} from './report.js';
import { benchSlices } from './slices.js';
import { requireWrk, runWrk, type WrkRun } from './wrk.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'compplan.js');
const LIST = '/v1/compensationPlanning/meritCycles';
const EMPLOYEES_PAGE = `${LIST}/${DEEP_CYCLE}/employees?limit=100`;
const CONNECTIONS = 32;
const WALK_PAGES = 500;
const DEEP_EMPLOYEES = 100_000;
const EMPLOYEES_DELTA = `${LIST}/${DEEP_CYCLE}/employees/delta?limit=100`;
const CHANGED_PERCENT = 1;

const { values: args } = parseFlags({
  options: {
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    'warm-up': { type: 'string', default: '1' },
    only: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'docs', 'benchmarks.md') },
    report: { type: 'string' },
    'only-bulk': { type: 'boolean', default: false },
    'skip-bulk': { type: 'boolean', default: false },
    'bulk-employees': { type: 'string', default: '1000000' },
    'only-slices': { type: 'boolean', default: false },
    'skip-slices': { type: 'boolean', default: false },
    'slices-employees': { type: 'string', default: '100000' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0] ?? '',
  );
  process.exit(0);
}
const SECONDS = wholeNumberFlag('seconds', args.seconds, 1);
const ROUNDS = wholeNumberFlag('rounds', args.rounds, 1);
const WARM_UP = wholeNumberFlag('warm-up', args['warm-up'], 0);
// The audit log's pairs of rounds: short, so that the two rounds of a pair share the
// machine's pace, which drifts by up to a third over tens of seconds (docs/benchmarks.md).
const AUDIT_PAIRS = 4 * ROUNDS;
const AUDIT_SECONDS = Math.min(2, SECONDS);
const BULK_EMPLOYEES = wholeNumberFlag('bulk-employees', args['bulk-employees'], 1);
// At least 1,002: the reporting line of 1,000 under employee 1 (bench/data.ts --slices).
const SLICES_EMPLOYEES = wholeNumberFlag('slices-employees', args['slices-employees'], 1_010);
const DATABASES =
  args.only === undefined
    ? (['sqlite', 'postgres'] as const)
    : [oneOfFlag('only', args.only, ['sqlite', 'postgres'] as const)];

function log(message: string) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** Runs `node ARGS…` to its end; its standard output, or an error with its output. */
function node(nodeArgs: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      nodeArgs,
      { cwd: ROOT, env, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`node ${nodeArgs.join(' ')}: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** The data set, loaded through the command line (bench/data.ts runs `compplan import`). */
async function load(databaseUrl: string) {
  const started = performance.now();
  await node(
    [
      '--import',
      'tsx',
      join(ROOT, 'bench', 'data.ts'),
      '--employees',
      '2000',
      '--deep',
      String(DEEP_EMPLOYEES),
      '--database',
      databaseUrl,
      '--only-load',
    ],
    process.env,
  );
  log(`loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** A captured answer: what the ceiling replays for its URL. */
interface Answer {
  status: number;
  /** Raw header pairs, flat, without those node:http writes itself. */
  headers: string[];
  body: Buffer;
}

// node:http writes these on every answer itself, the ceiling's as compplan's.
const HOP_BY_HOP = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** GET `path`, with the key when one is given. */
function get(base: string, path: string, key?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = key === undefined ? {} : { 'x-api-key': key };
    const req = request(`${base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i] ?? '';
          if (!HOP_BY_HOP.has(name.toLowerCase())) headers.push(name, res.rawHeaders[i + 1] ?? '');
        }
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function answered(base: string, path: string, key: string): Promise<Answer> {
  const answer = await get(base, path, key);
  if (answer.status !== 200) {
    throw new Error(`${path} answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
  }
  return answer;
}

/** The walk: page 1 of the 100,000 employees and the pages after it, by nextCursor. */
async function walkPaths(base: string, key: string, captured: Map<string, Answer>) {
  const paths: string[] = [];
  let path = EMPLOYEES_PAGE;
  while (paths.length < WALK_PAGES) {
    const answer = await answered(base, path, key);
    captured.set(path, answer);
    paths.push(path);
    const { nextCursor } = JSON.parse(answer.body.toString()) as { nextCursor: string | null };
    if (!nextCursor) throw new Error(`the cycle has fewer than ${WALK_PAGES} pages of 100`);
    path = `${EMPLOYEES_PAGE}&nextCursor=${encodeURIComponent(nextCursor)}`;
  }
  return paths;
}

/**
 * A whole delta walk of the deep cycle from `deltaToken` (none: the full one), every page
 * kept in `captured` when given; its paths and the token of its last page.
 */
async function deltaWalk(
  base: string,
  key: string,
  deltaToken: string | undefined,
  captured?: Map<string, Answer>,
): Promise<{ paths: string[]; deltaToken: string }> {
  const paths: string[] = [];
  let path = deltaToken
    ? `${EMPLOYEES_DELTA}&deltaToken=${encodeURIComponent(deltaToken)}`
    : EMPLOYEES_DELTA;
  for (;;) {
    const answer = await answered(base, path, key);
    captured?.set(path, answer);
    paths.push(path);
    const page = JSON.parse(answer.body.toString()) as {
      nextCursor: string | null;
      deltaToken: string | null;
    };
    if (page.nextCursor === null) {
      // Without one, the "delta" would be the whole cycle again, measured under its name.
      if (!page.deltaToken) throw new Error(`${path}: the last page of a delta has no deltaToken`);
      return { paths, deltaToken: page.deltaToken };
    }
    path = `${EMPLOYEES_DELTA}&nextCursor=${encodeURIComponent(page.nextCursor)}`;
  }
}

function peakRssKiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
}

async function listening(base: string, child: ChildProcess, what: string) {
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  await waitFor(
    // Any answer will do (compplan's /ping wants a key): the server is listening.
    async () => exited || (await get(base, '/ping')).status > 0,
    60_000,
    what,
  );
  if (exited) throw new Error(`${what} exited before it answered /ping`);
}

/**
 * Each scenario's answers as compplan gives them, written to files in `dir`: the
 * ceiling's answers (bench/ceiling.js reads them) and the walk's paths (walk.lua's).
 */
async function capture(base: string, key: string, dir: string, deltaToken: string) {
  const captured = new Map<string, Answer>();
  for (const path of ['/ping', LIST, EMPLOYEES_PAGE]) {
    captured.set(path, await answered(base, path, key));
  }
  const paths = await walkPaths(base, key, captured);
  const walkFile = join(dir, 'walk.txt');
  writeFileSync(walkFile, `${paths.join('\n')}\n`);
  const delta = await deltaWalk(base, key, deltaToken, captured);
  const deltaFile = join(dir, 'delta.txt');
  writeFileSync(deltaFile, `${delta.paths.join('\n')}\n`);
  const capturedFile = join(dir, 'captured.json');
  const answers = [...captured].map(([url, answer]) => ({
    url,
    status: answer.status,
    headers: answer.headers,
    body: answer.body.toString('base64'),
  }));
  writeFileSync(capturedFile, JSON.stringify(answers));
  const bytes = paths.reduce((sum, path) => sum + (captured.get(path)?.body.length ?? 0), 0);
  return {
    capturedFile,
    walkFile,
    deltaFile,
    walk: { pages: paths.length, bytes },
    delta: { pages: delta.paths.length },
  };
}

async function benchDatabase(
  database: DatabaseName,
  databaseUrl: string,
  dir: string,
): Promise<DatabaseResult> {
  log(`${database}: loading the data set`);
  await load(databaseUrl);
  if (database === 'PostgreSQL') {
    // A cluster just loaded has its vacuum ahead of it (hint bits, visibility map of
    // 100,000 new rows): done now, not by autovacuum while the servers are measured.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query('vacuum (analyze)');
    await client.query('checkpoint');
    await client.end();
  }
  // PATH only so that the script's first line (`#!/usr/bin/env -S node …`) finds node.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_SECOND: '1000000',
  };
  const { key } = JSON.parse(
    await node([BIN, 'keys', 'create', '--org', DEEP_ORGANIZATION, '--json'], env),
  ) as { key: string };

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const serve = (servePort: number, name: string, serveEnv: NodeJS.ProcessEnv) => {
    const logFd = openSync(join(dir, `${name}-${database}.log`), 'w');
    const spawned = spawn(BIN, ['serve', '--port', String(servePort), '--host', '127.0.0.1'], {
      cwd: ROOT,
      env: serveEnv,
      stdio: ['ignore', logFd, logFd],
    });
    closeSync(logFd);
    return spawned;
  };
  const server = serve(port, 'compplan', env);
  // The same build with the audit log off, for the measurement of its cost only.
  const auditOffPort = await freePort();
  const auditOffBase = `http://127.0.0.1:${auditOffPort}`;
  const auditOff = serve(auditOffPort, 'compplan-audit-off', { ...env, BENCH_AUDIT_LOG: 'off' });
  let ceiling: ChildProcess | undefined;
  let reader: ChildProcess | undefined;
  try {
    await listening(base, server, 'compplan serve');
    await listening(auditOffBase, auditOff, 'compplan serve (audit log off)');
    // The token of a full sync, then 1 % of the deep cycle changed by an import.
    const synced = await deltaWalk(base, key, undefined);
    await node(
      [
        '--import',
        'tsx',
        join(ROOT, 'bench', 'data.ts'),
        '--deep',
        String(DEEP_EMPLOYEES),
        '--change-deep',
        String(CHANGED_PERCENT),
        '--database',
        databaseUrl,
      ],
      process.env,
    );
    const { capturedFile, walkFile, deltaFile, walk, delta } = await capture(
      base,
      key,
      dir,
      synced.deltaToken,
    );
    const ceilingPort = await freePort();
    const ceilingBase = `http://127.0.0.1:${ceilingPort}`;
    ceiling = spawn(
      process.execPath,
      [join(ROOT, 'bench', 'ceiling.js'), capturedFile, String(ceilingPort)],
      { cwd: ROOT, env: {}, stdio: 'ignore' },
    );
    await listening(ceilingBase, ceiling, 'the ceiling');

    const runOf = (scenario: ScenarioName, url: string, seconds: number): WrkRun => {
      const common = { seconds, connections: CONNECTIONS, apiKey: key };
      if (scenario === 'employees walk') {
        return { ...common, url, script: 'walk.lua', scriptArgs: [walkFile] };
      }
      if (scenario === 'employees delta') {
        return { ...common, url, script: 'walk.lua', scriptArgs: [deltaFile] };
      }
      const path = { ping: '/ping', 'cycle list': LIST, 'employees page 1': EMPLOYEES_PAGE }[
        scenario
      ];
      return { ...common, url: `${url}${path}`, script: 'key.lua', scriptArgs: [] };
    };
    const measure = async (
      scenario: ScenarioName,
      url: string,
      seconds = SECONDS,
    ): Promise<Measure> => {
      const result = await runWrk(runOf(scenario, url, seconds));
      return {
        rps: result.rps,
        p99Ms: result.p99Ms,
        non2xx: result.non2xx,
        socketErrors: result.socketErrors,
      };
    };
    const scenarios: DatabaseResult['scenarios'] = [];
    for (const scenario of [
      'ping',
      'cycle list',
      'employees page 1',
      'employees walk',
      'employees delta',
    ] as const) {
      const audited = AUDIT_SCENARIOS.includes(scenario);
      if (WARM_UP > 0) await runWrk(runOf(scenario, base, WARM_UP));
      if (WARM_UP > 0 && audited) await runWrk(runOf(scenario, auditOffBase, WARM_UP));
      const result: ScenarioResult = { scenario, compplan: [], ceiling: [] };
      for (let round = 0; round < ROUNDS; round++) {
        result.compplan.push(await measure(scenario, base));
        result.ceiling.push(await measure(scenario, ceilingBase));
        const last = (measures: Measure[]) => measures.at(-1)?.rps.toFixed(0);
        log(
          `${database} ${scenario}, round ${round + 1}: compplan ${last(result.compplan)} req/s, ceiling ${last(result.ceiling)} req/s`,
        );
      }
      if (audited) {
        const audit = { on: [] as Measure[], off: [] as Measure[] };
        for (let pair = 0; pair < AUDIT_PAIRS; pair++) {
          // Taking turns to go first: in an A/B run of two identical servers, the one
          // measured first in each round was 4.8 % faster.
          const turns = pair % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
          for (const turn of turns) {
            audit[turn].push(
              await measure(scenario, turn === 'on' ? base : auditOffBase, AUDIT_SECONDS),
            );
          }
        }
        result.audit = audit;
        const rps = (measures: Measure[]) => measures.map((m) => m.rps.toFixed(0)).join(', ');
        log(
          `${database} ${scenario}, audit log on: ${rps(audit.on)} req/s; off: ${rps(audit.off)} req/s`,
        );
      }
      scenarios.push(result);
    }
    const loadedPeak = peakRssKiB(server.pid);
    log(
      `${database}: full reads of the deep cycle, REST and the OData feed, by a server of their own`,
    );
    const readerPort = await freePort();
    const readerBase = `http://127.0.0.1:${readerPort}`;
    reader = serve(readerPort, 'compplan-full-reads', env);
    await listening(readerBase, reader, 'compplan serve (full reads)');
    const reads = await fullReads(readerBase, key, DEEP_CYCLE, ROUNDS);
    for (const read of reads) {
      log(
        `${database} full read through ${read.api}: ${read.employees} employees in ${read.pages} pages, ${read.seconds.toFixed(2)} s`,
      );
    }
    return {
      database,
      scenarios,
      peakRssKiB: loadedPeak,
      walk,
      delta,
      fullReads: reads,
      fullReadsPeakRssKiB: peakRssKiB(reader.pid),
    };
  } finally {
    if (reader) await stopProcess(reader);
    if (ceiling) await stopProcess(ceiling);
    await stopProcess(auditOff);
    await stopProcess(server);
  }
}

/** The commit of the working tree measured; undefined outside a git checkout. */
function codeMeasured(): Results['code'] {
  try {
    const git = (...gitArgs: string[]) =>
      execFileSync('git', gitArgs, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    return { commit, modified: git('status', '--porcelain', '--untracked-files=no') !== '' };
  } catch {
    return undefined;
  }
}

function render(results: Results, out: string): string {
  const { text, met, targets } = renderReport(results);
  writeReport(out, text);
  log(`targets met: ${met} of ${targets}; written to ${out}`);
  return text;
}

async function main() {
  if (args.report) {
    const saved = JSON.parse(readFileSync(args.report, 'utf8')) as Results;
    process.stdout.write(`${render(saved, args.out)}\n`);
    return;
  }
  const bulk = () =>
    benchBulk({
      employees: BULK_EMPLOYEES,
      rounds: ROUNDS,
      databases: DATABASES,
      out: args.out,
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    });
  if (args['only-bulk']) {
    process.stdout.write(`${await bulk()}\n`);
    return;
  }
  await requireWrk();
  const slices = () =>
    benchSlices({
      employees: SLICES_EMPLOYEES,
      seconds: SECONDS,
      rounds: ROUNDS,
      warmUp: WARM_UP,
      databases: DATABASES,
      out: args.out,
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    });
  if (args['only-slices']) {
    process.stdout.write(`${await slices()}\n`);
    return;
  }
  const code = codeMeasured();
  const began = performance.now();
  const before = loadavg();
  const databases: DatabaseResult[] = [];
  for (const database of DATABASES) {
    const dir = mkdtempSync(join(tmpdir(), 'compplan-bench-'));
    try {
      if (database === 'sqlite') {
        databases.push(await benchDatabase('SQLite', `sqlite:${join(dir, 'bench.db')}`, dir));
      } else {
        const cluster = await startPostgres();
        try {
          databases.push(await benchDatabase('PostgreSQL', cluster.url, dir));
        } finally {
          await cluster.destroy();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const results: Results = {
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    ...(code ? { code } : {}),
    finishedAt: new Date().toISOString(),
    took: (performance.now() - began) / 1000,
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    load: { before, after: loadavg() },
    method: {
      seconds: SECONDS,
      rounds: ROUNDS,
      warmUp: WARM_UP,
      connections: CONNECTIONS,
      auditPairs: AUDIT_PAIRS,
      auditSeconds: AUDIT_SECONDS,
    },
    databases,
  };
  const saved = join(tmpdir(), 'compplan-bench-results.json');
  writeFileSync(saved, JSON.stringify(results, null, 2));
  log(`results in ${saved}; npm run bench -- --report ${saved} renders them again`);
  process.stdout.write(`${render(results, args.out)}\n`);
  if (!args['skip-slices']) process.stdout.write(`${await slices()}\n`);
  if (!args['skip-bulk']) process.stdout.write(`${await bulk()}\n`);
}

await main();
