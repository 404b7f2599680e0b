// npm run bench:export — `compplan export employees` of 2,000 and 20,000 employees
// through a real server at the default 10 requests per second (not part of npm test).
//
// For each size: a throwaway SQLite database loaded through the import path, the real app
// on 127.0.0.1 with RATE_LIMIT_PER_SECOND=10, and the real CLI (node bin/compplan.js
// export … -o FILE.csv) as a child process. The server counts every response by status
// and notes when the first request arrived and the last response left; the child's peak
// resident memory is read from /proc/PID/status (VmHWM) while it runs.
//
// Theoretical minimum: requests ÷ 10 per second (pages of 100, plus nothing else: the
// export asks only for the employee pages). Criterion: the export (first request to last
// response) takes at most 1.1× that, with zero 429s.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../src/api-keys/service.js';
import { buildApp } from '../src/app.js';
import { type Config, DEFAULT_CHANGE_RETENTION_DAYS } from '../src/config.js';
import { openDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { importDataSet } from '../src/import/load.js';
import type { DataSetInput } from '../src/import/schema.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CYCLE = 'mc_b0000000-0000-4000-8000-000000000001';
const SIZES = (process.env.BENCH_SIZES ?? '2000,20000').split(',').map(Number);
const PER_SECOND = 10;
const PAGE_SIZE = 100;

function dataSet(count: number): DataSetInput {
  const departments = ['Engineering', 'Sales, EMEA', 'Finance', 'People', 'Support'];
  return {
    organization: { slug: 'bench', name: 'Bench Corp', apiKeysEnabled: true },
    meritCycles: [
      {
        id: CYCLE,
        name: 'Bench cycle',
        status: 'active',
        startDate: '2025-01-01T00:00:00.000Z',
        endDate: '2025-03-31T23:59:59.999Z',
        currency: 'USD',
        employees: Array.from({ length: count }, (_, i) => ({
          email: `person${i}@bench.example`,
          firstName: `First${i % 97}`,
          lastName: `Last${String(i).padStart(6, '0')}`,
          currencyCode: ['USD', 'EUR', 'GBP'][i % 3] ?? 'USD',
          eligibilityStatus: i % 7 === 0 ? 'ineligible' : 'eligible',
          columns: {
            department: { name: 'Department', type: 'text', value: departments[i % 5] ?? '' },
            employee: {
              name: 'Employee',
              type: 'composite',
              value: {
                fullName: `First${i % 97} Last${i}`,
                jobLevel: `L${(i % 7) + 1}`,
                jobTitle: 'Engineer',
              },
            },
          },
        })),
      },
    ],
  };
}

interface Result {
  employees: number;
  requests: number;
  statuses: Record<string, number>;
  minimumSeconds: number;
  exportSeconds: number;
  ratio: number;
  processSeconds: number;
  peakRssMiB: number;
  rows: number;
  fileMiB: number;
}

async function measure(count: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'compplan-bench-'));
  const config: Config = {
    port: 0,
    host: '127.0.0.1',
    database: { dialect: 'sqlite', path: join(dir, 'bench.db') },
    redisUrl: undefined,
    rateLimitPerSecond: PER_SECOND,
    logLevel: 'warn',
    metricsPort: undefined,
    trustProxy: [],
    changeRetentionDays: DEFAULT_CHANGE_RETENTION_DAYS,
  };
  const database = openDatabase(config.database);
  await migrateToLatest(database);
  await importDataSet(database, dataSet(count));
  const { key } = await createApiKey(database.db, { org: 'bench', name: 'bench' });
  const app = await buildApp({ config, database });
  const statuses: Record<string, number> = {};
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  app.addHook('onRequest', async () => {
    first = Math.min(first, performance.now());
  });
  app.addHook('onResponse', async (_request, reply) => {
    statuses[reply.statusCode] = (statuses[reply.statusCode] ?? 0) + 1;
    last = Math.max(last, performance.now());
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const output = join(dir, 'employees.csv');
  try {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin', 'compplan.js'),
        'export',
        'employees',
        '--cycle',
        CYCLE,
        '--base-url',
        url,
        '-o',
        output,
      ],
      { env: { ...process.env, COMPPLAN_API_KEY: key }, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    let peakKiB = 0;
    const sample = () => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(
          readFileSync(`/proc/${child.pid}/status`, 'utf8'),
        )?.[1];
        if (hwm) peakKiB = Math.max(peakKiB, Number(hwm));
      } catch {
        // the process has exited
      }
    };
    const sampler = setInterval(sample, 10);
    const code = await new Promise<number | null>((resolve) => {
      // 'exit' fires after the process is gone; sample on the way.
      child.once('exit', (exitCode) => resolve(exitCode));
    });
    clearInterval(sampler);
    const processSeconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`the export exited ${code}`);
    const requests = Object.values(statuses).reduce((sum, n) => sum + n, 0);
    const minimumSeconds = Math.ceil(count / PAGE_SIZE) / PER_SECOND;
    const exportSeconds = (last - first) / 1000;
    const rows = readFileSync(output, 'utf8').split('\r\n').length - 2;
    return {
      employees: count,
      requests,
      statuses,
      minimumSeconds,
      exportSeconds: Number(exportSeconds.toFixed(2)),
      ratio: Number((exportSeconds / minimumSeconds).toFixed(3)),
      processSeconds: Number(processSeconds.toFixed(2)),
      peakRssMiB: Number((peakKiB / 1024).toFixed(1)),
      rows,
      fileMiB: Number((statSync(output).size / 2 ** 20).toFixed(2)),
    };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Result[] = [];
for (const size of SIZES) {
  const result = await measure(size);
  results.push(result);
  console.log(JSON.stringify(result));
}
console.log(
  '\n| Employees | Requests | Statuses | Minimum (s) | Export (s) | Ratio | Process (s) | Peak RSS (MiB) | CSV (MiB) |',
);
console.log('|---:|---:|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const statuses = Object.entries(r.statuses)
    .map(([status, n]) => `${n}× ${status}`)
    .join(', ');
  console.log(
    `| ${r.employees.toLocaleString('en')} | ${r.requests} | ${statuses} | ${r.minimumSeconds.toFixed(1)} | ${r.exportSeconds.toFixed(2)} | ${r.ratio.toFixed(3)} | ${r.processSeconds.toFixed(2)} | ${r.peakRssMiB} | ${r.fileMiB} |`,
  );
}
const failed = results.filter(
  (r) => r.ratio > 1.1 || (r.statuses['429'] ?? 0) > 0 || r.rows !== r.employees,
);
if (failed.length > 0) {
  console.error(`criterion not met for ${failed.map((r) => r.employees).join(', ')}`);
  process.exitCode = 1;
}
