// `compplan export … --delta STATE_FILE` (docs/delta-sync.md): the real CLI against a
// real server. The first run exports everything and keeps the token; the next exports
// only what changed since; a run that fails leaves the state file as it was, so that the
// next run exports those changes again.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { employeeId, SDK_CYCLE, SDK_ORG, sdkDataSet } from '../client/fixtures.js';
import { withWrongChecksum } from '../helpers/api-expectations.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { parseCsv } from './csv-parse.js';

const EMPLOYEES = 120;

describe('compplan export --delta', () => {
  let server: TestServer;
  let key: string;
  let dir: string;
  const cli = (args: string[], apiKey = key) =>
    runCli(['export', ...args, '--base-url', server.url], {
      env: { COMPPLAN_API_KEY: apiKey, COMPPLAN_BASE_URL: undefined },
      timeoutMs: 30_000,
    });
  const lines = (text: string) =>
    text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: string; removed?: true; firstName?: string });

  /** The data set with employee 0 renamed and the last two left out (pruned). */
  function changed(): DataSetInput {
    const dataSet = sdkDataSet(EMPLOYEES);
    const cycle = dataSet.meritCycles[0] as DataSetInput['meritCycles'][number];
    cycle.employees = (cycle.employees ?? [])
      .slice(0, EMPLOYEES - 2)
      .map((e, i) => (i === 0 ? { ...e, firstName: 'Renamed' } : e));
    return dataSet;
  }

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)] });
    key = await server.createKey(SDK_ORG);
    dir = mkdtempSync(join(tmpdir(), 'compplan-delta-export-'));
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports everything first, then only the changes; the state file moves on only after a run that wrote everything', async () => {
    const state = join(dir, 'employees.delta.json');
    const employees = ['employees', '--cycle', SDK_CYCLE.big, '--format', 'ndjson'];

    const first = await cli([...employees, '--delta', state]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(lines(first.stdout)).toHaveLength(EMPLOYEES);
    const saved = JSON.parse(readFileSync(state, 'utf8')) as Record<string, unknown>;
    expect(saved).toStrictEqual({
      version: 1,
      kind: 'employees',
      cycle: SDK_CYCLE.big,
      deltaToken: expect.any(String),
    });

    await server.load(changed(), { prune: true });
    // A run that fails (a revoked or wrong key) writes nothing and keeps the old token.
    const failed = await cli([...employees, '--delta', state], withWrongChecksum(key));
    expect(failed.code).toBe(1);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toStrictEqual(saved);

    const second = await cli([...employees, '--delta', state]);
    expect(second.code).toBe(0);
    expect(lines(second.stdout)).toStrictEqual([
      { id: employeeId(EMPLOYEES - 2), removed: true },
      { id: employeeId(EMPLOYEES - 1), removed: true },
      expect.objectContaining({ id: employeeId(0), firstName: 'Renamed' }),
    ]);
    const next = JSON.parse(readFileSync(state, 'utf8')) as { deltaToken: string };
    expect(next.deltaToken).not.toBe(saved.deltaToken);

    const third = await cli([...employees, '--delta', state]);
    expect(third.code).toBe(0);
    expect(third.stdout).toBe('');
  });

  it('writes CSV with a removed column, and a file only when it is complete', async () => {
    const state = join(dir, 'csv.delta.json');
    const output = join(dir, 'changes.csv');
    const full = await cli(['employees', '--cycle', SDK_CYCLE.big, '--delta', state, '-o', output]);
    expect(full.code).toBe(0);
    const rows = parseCsv(readFileSync(output, 'utf8').replace(/^\uFEFF/, ''));
    expect(rows[0]?.slice(0, 10)).toStrictEqual([
      'id',
      'email',
      'firstName',
      'lastName',
      'preferredName',
      'currencyCode.code',
      'currencyCode.value',
      'eligibilityStatus',
      'removed',
      'columns.department',
    ]);
    expect(rows.slice(1).every((row) => row[8] === '')).toBe(true);
    expect(existsSync(`${output}.export-state.json`)).toBe(false);

    await server.load(sdkDataSet(EMPLOYEES - 5), { prune: true });
    const changes = join(dir, 'changes-2.csv');
    const delta = await cli([
      'employees',
      '--cycle',
      SDK_CYCLE.big,
      '--delta',
      state,
      '-o',
      changes,
    ]);
    expect(delta.code).toBe(0);
    const removed = parseCsv(readFileSync(changes, 'utf8').replace(/^\uFEFF/, '')).slice(1);
    // The first test left employee 0 renamed and the last two out: this import renames
    // it back and leaves out three more: its removals first, in the order it made them.
    expect(removed.map((row) => [row[0], row[8]])).toStrictEqual([
      [employeeId(EMPLOYEES - 5), 'true'],
      [employeeId(EMPLOYEES - 4), 'true'],
      [employeeId(EMPLOYEES - 3), 'true'],
      [employeeId(0), ''],
    ]);
  });

  it('refuses a state file of another cycle, --delta with --resume or --max, and exchange rates', async () => {
    const state = join(dir, 'cycles.delta.json');
    expect((await cli(['merit-cycles', '--delta', state, '--format', 'ndjson'])).code).toBe(0);
    const other = await cli(['employees', '--cycle', SDK_CYCLE.big, '--delta', state]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      'holds the delta state of the merit cycles, not of the employees of',
    );
    for (const args of [
      ['employees', '--cycle', SDK_CYCLE.big, '--delta', join(dir, 'x.json'), '--max', '5'],
      ['exchange-rates', '--cycle', SDK_CYCLE.big, '--delta', join(dir, 'x.json')],
      ['merit-cycles', '--delta', join(dir, 'x.json'), '--status', 'active'],
    ]) {
      const refused = await cli(args);
      expect(refused.code).toBe(2);
      expect(existsSync(join(dir, 'x.json'))).toBe(false);
    }
  });
});
