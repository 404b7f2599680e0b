// Soak: drives a real compplan server for a bounded time at a high rate and reports what
// it answered, how fast, and whether its memory stayed bounded. Not part of `npm test`.
//
//   npm run soak                         # 120 s, 100,000 employees, 1,000 keys
//   npm run soak -- --duration 45        # shorter
//   npm run soak -- --help
//
// What it does:
// 1. A fresh SQLite database in a temporary directory; a data set of one organisation with
//    --employees employees over 10 merit cycles, loaded through the real import
//    (`node bin/compplan.js import FILE`); --keys API keys made with the key service.
// 2. `node bin/compplan.js serve` on 127.0.0.1 (a free port), RATE_LIMIT_PER_SECOND as in
//    production (10 unless --quota says otherwise), LOG_LEVEL=warn (request lines at info
//    would make the run measure the terminal).
// 3. Walks every cycle's employees once (limit 100) to collect every page's cursor, so
//    the load reads distinct pages across all employees, not one cached page.
// 4. wrk (bench/wrk/random.lua), --connections connections for --duration seconds: 70 %
//    employee pages (a random page of a random cycle, limit 100), 10 % the cycle list,
//    10 % one cycle, 5 % exchange rates, 5 % ping; each request with a key drawn at random
//    from --keys.
//    Keys are drawn at random, so a key now and then gets more than its quota in a second:
//    those 429s are intended. Anything else that is not a 200 is an error.
// 5. The server's resident memory (VmRSS), sampled every second: before the load, its mean
//    just after the warm-up (20–30 % of the run) and over the last tenth, which must not be
//    10 % or more above it (means, because RSS saw-tooths with garbage collection).
// Exit code 0 when there were no unintended errors and memory stayed bounded, else 1.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiKey } from '../src/api-keys/service.js';
import { openDatabase } from '../src/db/connect.js';
import { parseFlags, wholeNumberFlag } from './options.js';
import { requireWrk, runWrk } from './wrk.js';

const REPO_ROOT = new URL('..', import.meta.url).pathname;
const BIN = join(REPO_ROOT, 'bin', 'compplan.js');
const CYCLES = 10;
const ORG = 'soak';
const LIST = '/v1/compensationPlanning/meritCycles';

const { values: args } = parseFlags({
  options: {
    duration: { type: 'string', default: '120' },
    employees: { type: 'string', default: '100000' },
    keys: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '64' },
    quota: { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(
    'npm run soak -- [--duration S=120] [--employees N=100000] [--keys K=1000] [--connections C=64] [--quota Q=10] [--keep]',
  );
  process.exit(0);
}
const DURATION_S = wholeNumberFlag('duration', args.duration, 1);
const EMPLOYEES = wholeNumberFlag('employees', args.employees, 1);
const KEYS = wholeNumberFlag('keys', args.keys, 1);
const CONNECTIONS = wholeNumberFlag('connections', args.connections, 1);
const QUOTA = wholeNumberFlag('quota', args.quota, 1);

const cycleId = (c: number) => `mc_80000000-0000-4000-8000-${String(c).padStart(12, '0')}`;

function dataSet() {
  const perCycle = Math.ceil(EMPLOYEES / CYCLES);
  const departments = ['Engineering', 'Sales', 'Finance', 'Operations', 'Research'];
  const currencies = ['USD', 'EUR', 'GBP', 'JPY', 'CHF'];
  return {
    organization: { slug: ORG, name: 'Soak Corp', apiKeysEnabled: true },
    meritCycles: Array.from({ length: CYCLES }, (_, c) => ({
      id: cycleId(c),
      name: `Soak cycle ${c}`,
      status: (['active', 'inactive', 'finalized'] as const)[c % 3],
      startDate: `2025-${String((c % 12) + 1).padStart(2, '0')}-01T00:00:00.000Z`,
      endDate: '2025-12-31T00:00:00.000Z',
      createdDate: `2024-${String((c % 12) + 1).padStart(2, '0')}-15T00:00:00.000Z`,
      currency: 'USD',
      exchangeRates: { EUR: 0.92, GBP: 0.79, JPY: 151.3, CHF: 0.88 },
      employees: Array.from({ length: Math.min(perCycle, EMPLOYEES - c * perCycle) }, (_, i) => {
        const n = c * perCycle + i;
        return {
          id: `mce_80000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
          email: `employee${n}@soak.example`,
          firstName: `First${n % 1_000}`,
          lastName: `Last${n % 7_919}`,
          preferredName: n % 5 === 0 ? `P${n}` : null,
          currencyCode: currencies[n % currencies.length],
          eligibilityStatus: n % 10 === 0 ? 'ineligible' : 'eligible',
          columns: {
            department: {
              name: 'Department',
              type: 'text',
              value: departments[n % departments.length],
            },
            employee: {
              name: 'Employee',
              type: 'composite',
              value: {
                fullName: `First${n % 1_000} Last${n % 7_919}`,
                jobLevel: `L${n % 8}`,
                jobTitle: 'Analyst',
              },
            },
          },
        };
      }),
    })),
  };
}

function run(argv: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [BIN, ...argv], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`compplan ${argv.join(' ')} exited ${code}: ${output}`);
    return output;
  });
}

async function startServer(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.resume(); // warn-level log lines, if any
  const url = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(
      () => reject(new Error(`the server did not start: ${stderr}`)),
      30_000,
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /compplan is listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
  });
  return { child, url };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const late = sleep(15_000).then(() => 'late' as const);
  if ((await Promise.race([exited, late])) === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kib / 1024) * 10) / 10;
}

async function collectCursors(url: string, keys: readonly string[]): Promise<string[]> {
  const targets: string[] = [];
  let turn = 0;
  // Each page with the next key, so that the walk stays within every key's quota.
  const nextKey = () => keys[turn++ % keys.length] ?? '';
  for (let c = 0; c < CYCLES; c++) {
    const path = `${LIST}/${cycleId(c)}/employees`;
    let target = `${path}?limit=100`;
    for (;;) {
      targets.push(target);
      const response = await fetch(`${url}${target}`, { headers: { 'x-api-key': nextKey() } });
      if (response.status !== 200) throw new Error(`walking ${path}: ${response.status}`);
      const { nextCursor } = (await response.json()) as { nextCursor: string | null };
      if (!nextCursor) break;
      target = `${path}?limit=100&nextCursor=${nextCursor}`;
    }
  }
  return targets;
}

async function main() {
  await requireWrk();
  const dir = mkdtempSync(join(tmpdir(), 'compplan-soak-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `sqlite:${join(dir, 'soak.db')}`,
    RATE_LIMIT_PER_SECOND: String(QUOTA),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  delete env.METRICS_PORT;
  let server: ChildProcess | undefined;
  try {
    console.log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
    );
    let started = Date.now();
    const file = join(dir, 'soak.json');
    writeFileSync(file, JSON.stringify(dataSet()));
    console.log((await run(['import', file], env)).trim());
    console.log(
      `import of ${EMPLOYEES} employees: ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );

    const database = openDatabase({ dialect: 'sqlite', path: join(dir, 'soak.db') });
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++)
      keys.push((await createApiKey(database.db, { org: ORG, name: `soak ${i}` })).key);
    await database.close();

    const started_ = await startServer(env);
    server = started_.child;
    const { url } = started_;
    const pid = server.pid ?? 0;
    const pages = await collectCursors(url, keys);
    console.log(`${keys.length} keys; ${pages.length} distinct employee pages`);
    await sleep(2_000);
    const rssStart = rssMiB(pid);

    // The mix as a file of paths wrk draws from at random: every page once (70 % of the
    // lines), the other requests in their shares of the rest.
    const share = (fraction: number) => Math.round((pages.length / 0.7) * fraction);
    const cycles = Array.from({ length: CYCLES }, (_, c) => cycleId(c));
    const mix = [
      ...pages,
      ...Array.from({ length: share(0.1) }, () => `${LIST}?limit=25`),
      ...Array.from({ length: share(0.1) }, (_, i) => `${LIST}/${cycles[i % CYCLES]}`),
      ...Array.from(
        { length: share(0.05) },
        (_, i) => `${LIST}/${cycles[i % CYCLES]}/exchangeRates`,
      ),
      ...Array.from({ length: share(0.05) }, () => '/ping'),
    ];
    const pathsFile = join(dir, 'paths.txt');
    const keysFile = join(dir, 'keys.txt');
    writeFileSync(pathsFile, `${mix.join('\n')}\n`);
    writeFileSync(keysFile, `${keys.join('\n')}\n`, { mode: 0o600 });
    const samples: { at: number; rss: number }[] = [];
    const sampler = setInterval(() => samples.push({ at: Date.now(), rss: rssMiB(pid) }), 1_000);
    started = Date.now();
    const result = await runWrk({
      url,
      script: 'random.lua',
      scriptArgs: [keysFile, pathsFile],
      seconds: DURATION_S,
      connections: CONNECTIONS,
    });
    clearInterval(sampler);
    const rssEnd = rssMiB(pid);
    // RSS moves in a saw-tooth with garbage collection: compare the mean over a window just
    // after the warm-up (20–30 % of the run) with the mean over the last tenth.
    const meanBetween = (from: number, to: number) => {
      const window = samples.filter(
        (sample) =>
          sample.at >= started + from * DURATION_S * 1000 &&
          sample.at <= started + to * DURATION_S * 1000,
      );
      const sum = window.reduce((total, sample) => total + sample.rss, 0);
      return Math.round((sum / Math.max(1, window.length)) * 10) / 10;
    };
    const rssWarm = meanBetween(0.2, 0.3);
    const rssLate = meanBetween(0.9, 1);
    const rssMax = Math.max(...samples.map((sample) => sample.rss));
    const series = samples.filter((_, index) => index % 5 === 4).map((sample) => sample.rss);

    const byStatus = result.statuses;
    const total = result.requests;
    const limited = byStatus['429'] ?? 0;
    const ok = byStatus['200'] ?? 0;
    const unintended = total - ok - limited + result.socketErrors;
    const growth = (rssLate - rssWarm) / rssWarm;
    const report = {
      durationSeconds: DURATION_S,
      employees: EMPLOYEES,
      keys: KEYS,
      connections: CONNECTIONS,
      quotaPerKeyPerSecond: QUOTA,
      requests: total,
      requestsPerSecond: Math.round(result.rps),
      byStatus,
      intended429: limited,
      unintendedErrors: unintended,
      socketErrors: result.socketErrors,
      latencyMs: { p50: result.p50Ms, p90: result.p90Ms, p99: result.p99Ms, max: result.maxMs },
      throughputMiBPerSecond: Math.round((result.bytes / result.seconds / 2 ** 20) * 10) / 10,
      rssMiB: {
        beforeLoad: rssStart,
        meanAfterWarmUp: rssWarm,
        meanLastTenth: rssLate,
        atEnd: rssEnd,
        max: rssMax,
        every5s: series,
      },
      rssGrowthAfterWarmUp: `${(growth * 100).toFixed(1)} %`,
    };
    console.log(JSON.stringify(report, null, 2));
    const pass = unintended === 0 && growth < 0.1;
    console.log(pass ? 'PASS: no unintended errors, memory bounded' : 'FAIL');
    process.exitCode = pass ? 0 : 1;
  } finally {
    if (server) await stop(server);
    if (!args.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
}

await main();
