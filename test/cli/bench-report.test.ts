// `npm run bench -- --report FILE` renders saved results again, measuring nothing: the
// text says how those results were measured (saved with them), never the flags the
// rendering run happens to be given.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = `${ROOT}node_modules/.bin/tsx`;
const work = mkdtempSync(join(tmpdir(), 'compplan-bench-report-'));

const measure = (rps: number, p99: number) => ({
  rps,
  p50: p99 / 2,
  p99,
  non2xx: 0,
  errors: 0,
  cpuPerRequest: 1_000_000 / rps,
});
const row = (mode: string, rps: number) => ({
  database: 'SQLite',
  scenario: 'employees page 1 (limit 100)',
  mode,
  runs: [measure(rps, 30), measure(rps, 30)],
  ceiling: [measure(10_000, 20), measure(10_000, 20)],
});
const saved = {
  rows: [row('limiter on', 5_000), row('limiter off', 5_200)],
  peakRss: { SQLite: { 'limiter on': 150, 'limiter off': 140 } },
  machine: 'a test machine',
  took: 600,
  command: 'npm run bench -- --runs 2 --duration 7',
};

function render(results: object, flags: string[]) {
  const file = join(work, 'results.json');
  const out = join(work, 'benchmarks.md');
  writeFileSync(file, JSON.stringify(results));
  return new Promise<string>((resolve, reject) => {
    execFile(
      TSX,
      ['bench/run.ts', '--report', file, '--out', out, ...flags],
      { cwd: ROOT, timeout: 30_000 },
      (error) => (error ? reject(error) : resolve(readFileSync(out, 'utf8'))),
    );
  });
}

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run bench -- --report', () => {
  it('says how the saved results were measured, whatever flags it is given', async () => {
    const method = { runs: 2, duration: 7, warmUp: 3, connections: 40 };
    const text = await render({ ...saved, method }, ['--runs', '9', '--warm-up', '0']);
    expect(text).toContain(
      'Medians of 2 runs of 7 s, 40 connections, each compplan run (after 3 s of unmeasured load on it)',
    );
    expect(text).toContain('| p99 ≤ 20 ms at 40 connections (every scenario, limiter on) |');
    expect(text).toContain(
      "| Employees page of 100 ≥ 40 % of the ceiling's req/s | SQLite | 50 % | yes |",
    );
  });

  it('reads the deep-page target from the two pages measured together, when they were', async () => {
    const deep = { ...row('limiter on', 4_000), scenario: 'deep employees page (limit 100)' };
    const apart = { ...saved, rows: [...saved.rows, deep] };
    deep.runs = [measure(4_000, 40), measure(4_000, 40)];
    expect(await render(apart, [])).toContain(
      "| Deep page p99 ≤ 1.2 × page-1 p99 | SQLite | 40 ms vs 30 ms (1.33×; the ceiling's 20 vs 20 ms) | **no** |",
    );
    const together = {
      ...apart,
      method: { runs: 2, duration: 7, warmUp: 1, connections: 50 },
      together: {
        SQLite: {
          page1: [measure(3_000, 20), measure(3_000, 24)],
          deep: [measure(3_000, 21), measure(3_000, 27)],
        },
      },
    };
    expect(await render(together, [])).toContain(
      "| Deep page p99 ≤ 1.2 × page-1 p99 | SQLite | 24 ms vs 22 ms (1.09×), measured together (25 connections each, one server, the same seconds); apart 40 ms vs 30 ms (1.33×; the ceiling's 20 vs 20 ms) | yes |",
    );
  });

  it('fails a run in which any answer was not 2xx: the quota, not the server, was measured', async () => {
    expect(await render(saved, [])).toContain(
      '| Every answer 2xx, no errors (a 429 would measure the quota, not the server) | SQLite | none in any run | yes |',
    );
    const throttled = row('limiter on', 5_000);
    throttled.runs = [measure(5_000, 30), { ...measure(5_000, 30), non2xx: 3_049 }];
    expect(await render({ ...saved, rows: [throttled, row('limiter off', 5_200)] }, [])).toContain(
      '| Every answer 2xx, no errors (a 429 would measure the quota, not the server) | SQLite | employees page 1 (limit 100) [limiter on]: 3,049 | **no** |',
    );
    const together = {
      ...saved,
      together: {
        SQLite: {
          page1: [measure(3_000, 20)],
          deep: [{ ...measure(3_000, 21), errors: 2 }],
        },
      },
    };
    expect(await render(together, [])).toContain(
      '| SQLite | page 1 and the deep page together: 2 | **no** |',
    );
  });

  it('reads older results, saved without their method, from their command line', async () => {
    const text = await render(saved, ['--duration', '30', '--connections', '10']);
    expect(text).toContain(
      'Medians of 2 runs of 7 s, 50 connections, each compplan run (its warm-up not recorded in these results)',
    );
  });
});
