// `compplan export`: the real CLI (node bin/compplan.js) against a real server, over HTTP.

import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CYCLES_IN_ORDER,
  employeeIdsInOrder,
  SDK_CYCLE,
  SDK_ORG,
  sdkDataSet,
} from '../client/fixtures.js';
import {
  type CliResult,
  REPO_ROOT,
  runAllCli,
  runCli,
  runCliMeanwhile,
  stopProcess,
} from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { csvRecords, parseCsv } from './csv-parse.js';

const EMPLOYEES = 250;

const EMPLOYEE_HEADER = [
  'id',
  'email',
  'firstName',
  'lastName',
  'preferredName',
  'currencyCode.code',
  'currencyCode.value',
  'eligibilityStatus',
  'columns.department',
  'columns.employee.fullName',
  'columns.employee.jobLevel',
  'columns.employee.jobTitle',
  'columns.other',
];

interface ApiEmployee {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  preferredName: string | null;
  currencyCode: { code?: string; value?: string };
  eligibilityStatus: string;
  columns: Record<string, { name: string; type: string; value: unknown }>;
}

// Nothing listens on port 9 (discard). The client retries a connection error four times
// with a random backoff (about 4 s in all, up to 7.5 s) before the command fails.
const UNREACHABLE = 'http://127.0.0.1:9';

describe('compplan export', () => {
  let server: TestServer;
  let key: string;
  let dir: string;
  let employees: ApiEmployee[];
  /**
   * The commands pointed at UNREACHABLE, started in beforeAll: they spend their seconds
   * waiting out the client's backoff, which they do side by side and while the other tests
   * run, instead of one after another. Each test awaits its own and asserts on it.
   */
  let unreachable: {
    toStdout: Promise<CliResult>;
    toNewFile: Promise<CliResult>;
    forceOntoFile: Promise<CliResult>;
  };
  const unreachableFile = () => join(dir, 'unreached.csv');
  const keptFile = () => join(dir, 'kept.csv');
  const KEPT = 'yesterday,s\r\nexport,\r\n';
  const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
    runCli(['export', ...args, '--base-url', server.url], {
      env: { COMPPLAN_API_KEY: key, COMPPLAN_BASE_URL: undefined, ...env },
      timeoutMs: 30_000,
    });

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)] });
    key = await server.createKey(SDK_ORG);
    dir = mkdtempSync(join(tmpdir(), 'compplan-export-'));
    writeFileSync(keptFile(), KEPT);
    unreachable = {
      toStdout: runCliMeanwhile(
        ['export', 'merit-cycles', '--base-url', UNREACHABLE, '--key', key],
        {
          timeoutMs: 60_000,
        },
      ),
      toNewFile: runCliMeanwhile(
        [
          ...['export', 'employees', '--cycle', SDK_CYCLE.big, '-o', unreachableFile()],
          ...['--base-url', UNREACHABLE, '--key', key],
        ],
        { timeoutMs: 60_000 },
      ),
      forceOntoFile: runCliMeanwhile(
        ['export', 'merit-cycles', '-o', keptFile(), '--force', '--base-url', UNREACHABLE],
        { env: { COMPPLAN_API_KEY: key }, timeoutMs: 60_000 },
      ),
    };
    employees = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : '';
      const response = await server.request(
        `/v1/compensationPlanning/meritCycles/${SDK_CYCLE.big}/employees?limit=100${query}`,
        { key },
      );
      const page = (await response.json()) as { data: ApiEmployee[]; nextCursor: string | null };
      employees.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor);
  });
  afterAll(async () => {
    if (unreachable) await Promise.allSettled(Object.values(unreachable));
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes a cycle's employees as RFC 4180 CSV with a UTF-8 BOM and flattened columns, silently", async () => {
    const file = join(dir, 'employees.csv');
    const result = await cli(['employees', '--cycle', SDK_CYCLE.big, '--output', file]);
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('\uFEFFid,email,')).toBe(true);
    const [header] = parseCsv(text.slice(1));
    expect(header).toEqual(EMPLOYEE_HEADER);
    const records = csvRecords(text.slice(1));
    expect(records.map((record) => record.id)).toEqual(employeeIdsInOrder(EMPLOYEES));
    expect(records).toEqual(
      employees.map((employee) => {
        const composite = employee.columns.employee?.value as Record<string, string>;
        return {
          id: employee.id,
          email: employee.email,
          firstName: employee.firstName,
          lastName: employee.lastName,
          preferredName: employee.preferredName ?? '',
          'currencyCode.code': employee.currencyCode.code ?? '',
          'currencyCode.value': employee.currencyCode.value ?? '',
          eligibilityStatus: employee.eligibilityStatus,
          'columns.department': employee.columns.department?.value as string,
          'columns.employee.fullName': composite.fullName,
          'columns.employee.jobLevel': composite.jobLevel,
          'columns.employee.jobTitle': composite.jobTitle,
          'columns.other': '',
        };
      }),
    );
  });

  it('quotes exactly the fields that need it: commas, quotes, line breaks, edge spaces', async () => {
    const result = await cli(['employees', '--cycle', SDK_CYCLE.big, '--no-bom']);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\r\n');
    expect(lines[0]).toBe(EMPLOYEE_HEADER.join(','));
    expect(result.stdout).toContain('"Smith, Jr."');
    expect(result.stdout).toContain('"Alex ""Lex"""');
    expect(result.stdout).toContain('"R&D\nLab 2"');
    expect(result.stdout).toContain('," Finance",');
    expect(result.stdout).toContain(',"Manager, ""People""",');
    expect(csvRecords(result.stdout)).toHaveLength(EMPLOYEES);
  });

  it('stops after --max rows, asking only for what is wanted', async () => {
    const result = await cli(['employees', '--cycle', SDK_CYCLE.big, '--max', '7', '--no-bom']);
    expect(result.code).toBe(0);
    expect(csvRecords(result.stdout).map((record) => record.id)).toEqual(
      employeeIdsInOrder(EMPLOYEES).slice(0, 7),
    );
  });

  it('streams NDJSON to standard output, one API object per line, in API order', async () => {
    const result = await cli([
      'employees',
      '--cycle',
      SDK_CYCLE.big,
      '--format',
      'ndjson',
      '--page-size',
      '30',
    ]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line))).toEqual(employees);
  });

  it('stops quietly, exit 0, when the reader of standard output closes it (`| head`)', async () => {
    const child = spawn(
      process.execPath,
      [
        join(REPO_ROOT, 'bin', 'compplan.js'),
        'export',
        'employees',
        '--cycle',
        SDK_CYCLE.big,
        '--page-size',
        '10',
        '--base-url',
        server.url,
      ],
      { env: { ...process.env, COMPPLAN_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    try {
      child.stdout.once('data', () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) =>
        child.once('exit', (exitCode) => resolve(exitCode)),
      );
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    } finally {
      await stopProcess(child);
    }
  });

  it('writes merit cycles as a JSON array, filtered like the API', async () => {
    const [all, finalized, none] = await Promise.all([
      cli(['merit-cycles', '--format', 'json', '--page-size', '2']),
      cli(['merit-cycles', '--format', 'json', '--status', 'finalized', '--gte', '2023-06-01']),
      cli(['merit-cycles', '--format', 'json', '--gt', '2030-01-01']),
    ]);
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as { id: string }[]).map((cycle) => cycle.id)).toEqual(
      CYCLES_IN_ORDER,
    );
    expect(JSON.parse(finalized.stdout)).toEqual([
      {
        id: SDK_CYCLE.finalized,
        name: '2024 Annual Merit',
        startDate: '2024-01-01T00:00:00.000Z',
        endDate: '2026-12-31T23:59:59.999Z',
        createdDate: '2024-11-04T00:00:00.000Z',
        status: 'finalized',
      },
    ]);
    expect(none.stdout).toBe('[\n]\n');
  });

  it('writes exchange rates as one row per currency', async () => {
    const result = await cli(['exchange-rates', '--cycle', SDK_CYCLE.big, '--no-bom']);
    expect(result.stdout).toBe(
      'base,currency,rate\r\nUSD,EUR,0.92\r\nUSD,GBP,0.79\r\nUSD,JPY,151.3\r\n',
    );
  });

  it('takes the format from the --output extension', async () => {
    const file = join(dir, 'cycles.ndjson');
    expect((await cli(['merit-cycles', '-o', file])).code).toBe(0);
    expect(
      readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).id),
    ).toEqual(CYCLES_IN_ORDER);
  });

  it('shows progress on standard error when asked (as on a terminal), paging or in one download', async () => {
    const [paged, downloaded] = await Promise.all([
      cli([
        'employees',
        '--cycle',
        SDK_CYCLE.big,
        '--no-bulk',
        '--progress',
        '-o',
        join(dir, 'p.csv'),
      ]),
      cli(['employees', '--cycle', SDK_CYCLE.big, '--progress', '-o', join(dir, 'd.csv')]),
    ]);
    expect(paged.code).toBe(0);
    expect(paged.stderr).toMatch(/✔ employees: 250 rows, 3 pages, [\d.]+ pages\/s, 0:\d\d\n$/);
    expect(downloaded.code).toBe(0);
    expect(downloaded.stderr).toMatch(/✔ employees: 250 rows, in one download, 0:\d\d\n$/);
  });

  it('refuses to overwrite a file without --force', async () => {
    const file = join(dir, 'twice.csv');
    expect((await cli(['merit-cycles', '-o', file])).code).toBe(0);
    const again = await cli(['merit-cycles', '-o', file]);
    expect(again).toMatchObject({
      code: 1,
      stderr: `compplan: ${file} exists: add --force to overwrite it\n`,
    });
    expect((await cli(['merit-cycles', '-o', file, '--force'])).code).toBe(0);
  });

  it('refuses an output it cannot write (a folder that does not exist, a path through a file, a folder) before its first request: one line, exit 1, nothing written', async () => {
    const file = join(dir, 'in-the-way.csv');
    writeFileSync(file, 'kept\n');
    const cases: [string, string][] = [
      [
        join(dir, 'no-such-folder', 'x.csv'),
        `the folder ${join(dir, 'no-such-folder')} does not exist`,
      ],
      [join(dir, 'no', 'such', 'x.csv'), `the folder ${join(dir, 'no', 'such')} does not exist`],
      [join(file, 'x.csv'), `${file} is a file, not a folder`],
      [join(file, 'deeper', 'x.csv'), `${file} is a file, not a folder`],
      [dir, 'it is a folder'],
    ];
    // Nothing listens at the second base URL: the path is refused before any request is made.
    const runs = cases.flatMap(([output, reason]) =>
      [server.url, UNREACHABLE].map((baseUrl) => ({ output, reason, baseUrl })),
    );
    const results = await runAllCli(
      runs.map(({ output, baseUrl }) => [
        'export',
        'merit-cycles',
        '-o',
        output,
        '--force',
        '--base-url',
        baseUrl,
      ]),
      { env: { COMPPLAN_API_KEY: key, COMPPLAN_BASE_URL: undefined }, timeoutMs: 30_000 },
    );
    for (const [index, { output, reason, baseUrl }] of runs.entries()) {
      expect({ output, baseUrl, ...results[index] }).toEqual({
        output,
        baseUrl,
        code: 1,
        signal: null,
        stdout: '',
        stderr: `compplan: cannot write ${output}: ${reason}\n`,
      });
    }
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
    expect(existsSync(join(dir, 'no-such-folder'))).toBe(false);
    expect(existsSync(join(dir, 'no'))).toBe(false);
  }, 60_000);

  it('fails with the status, the request id and a hint for a bad key or an unknown cycle', async () => {
    const [badKey, unknown, noKey, noCycle] = await Promise.all([
      cli(['employees', '--cycle', SDK_CYCLE.big], { COMPPLAN_API_KEY: 'cpk_nope' }),
      cli(['employees', '--cycle', 'mc_00000000-0000-4000-8000-000000000000']),
      cli(['merit-cycles'], { COMPPLAN_API_KEY: undefined }),
      cli(['employees']),
    ]);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(
      /^compplan: GET \/v1\/compensationPlanning\/meritCycles\/mc_[\w-]+\/employees\/bulk: 401 Missing or invalid API key \(request id [\w-]+\) \(check --key or COMPPLAN_API_KEY; is http:\/\/127\.0\.0\.1:\d+ the right --base-url\?\)\n$/,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404 Merit cycle not found');
    expect(noKey).toMatchObject({
      code: 2,
      stderr: 'compplan: an API key is needed: --key KEY or COMPPLAN_API_KEY\n',
    });
    expect(noCycle).toMatchObject({
      code: 2,
      stderr: 'compplan: exporting employees needs --cycle ID\n',
    });
  });

  it('fails with a connection error naming the base URL when nothing listens there', async () => {
    const result = await unreachable.toStdout;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`(is ${UNREACHABLE} the right --base-url?)`);
  }, 60_000);

  it('an export that fails before its first page leaves no file and no state, and the corrected command then runs without --resume', async () => {
    const file = unreachableFile();
    const state = `${file}.export-state.json`;
    const failed = await unreachable.toNewFile;
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`(is ${UNREACHABLE} the right --base-url?)`);
    expect(failed.stderr).not.toContain('--resume');
    expect(existsSync(file)).toBe(false);
    expect(existsSync(state)).toBe(false);

    const badKey = await cli(['employees', '--cycle', SDK_CYCLE.big, '-o', file], {
      COMPPLAN_API_KEY: 'cpk_nope',
    });
    expect(badKey.code).toBe(1);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(state)).toBe(false);

    const corrected = await cli(['employees', '--cycle', SDK_CYCLE.big, '-o', file]);
    expect(corrected).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(csvRecords(readFileSync(file, 'utf8').slice(1)).map((record) => record.id)).toEqual(
      employeeIdsInOrder(EMPLOYEES),
    );
    expect(existsSync(state)).toBe(false);
  }, 60_000);

  it('--force onto an existing file leaves it untouched when the export fails before its first page', async () => {
    const file = keptFile();
    const result = await unreachable.forceOntoFile;
    expect(result.code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(KEPT);
    expect(existsSync(`${file}.export-state.json`)).toBe(false);
  }, 60_000);

  it('a state file that records no page (a run stopped before its first page) does not block a run without --resume', async () => {
    const file = join(dir, 'stopped-early.csv');
    const state = `${file}.export-state.json`;
    // What a run that stopped between creating the file and its first page leaves.
    writeFileSync(file, '');
    writeFileSync(
      state,
      JSON.stringify({
        version: 1,
        request: { kind: 'merit-cycles', format: 'csv', pageSize: 100, filters: {}, bom: true },
        bytes: 0,
        rows: 0,
        pages: 0,
        header: undefined,
      }),
    );
    const result = await cli(['merit-cycles', '-o', file]);
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(csvRecords(readFileSync(file, 'utf8').slice(1)).map((record) => record.id)).toEqual(
      CYCLES_IN_ORDER,
    );
    expect(existsSync(state)).toBe(false);
  });

  describe('after an interruption', () => {
    let slow: TestServer;
    let slowKey: string;
    beforeAll(async () => {
      // 10 requests a second, pages of 25: the 10 pages take about a second, of which the
      // run below is interrupted after 2 or 3.
      slow = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)], rateLimitPerSecond: 10 });
      slowKey = await slow.createKey(SDK_ORG);
    });
    afterAll(async () => {
      await slow.close();
    });

    it('resumes with --resume where it stopped, dropping a page cut short, so that every employee is written once', async () => {
      const file = join(dir, 'resumed.csv');
      const state = `${file}.export-state.json`;
      const args = [
        'export',
        'employees',
        '--cycle',
        SDK_CYCLE.big,
        '--no-bulk',
        '--page-size',
        '25',
        '-o',
        file,
        '--base-url',
        slow.url,
      ];
      const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'compplan.js'), ...args], {
        env: { ...process.env, COMPPLAN_API_KEY: slowKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      try {
        // Interrupt once a few pages are down.
        for (let i = 0; i < 200; i++) {
          if (existsSync(state) && JSON.parse(readFileSync(state, 'utf8')).rows >= 30) break;
          await sleep(25);
        }
        child.kill('SIGINT');
        const code = await new Promise<number | null>((resolve) =>
          child.once('exit', (exitCode) => resolve(exitCode)),
        );
        expect(code).toBe(130);
      } finally {
        await stopProcess(child);
      }
      expect(stderr).toMatch(
        new RegExp(
          `^compplan: export interrupted after \\d+ rows; run the same command with --resume to continue ${file.replaceAll('.', '\\.')}\\n$`,
        ),
      );
      const saved = JSON.parse(readFileSync(state, 'utf8')) as { rows: number; bytes: number };
      expect(saved.rows).toBeGreaterThanOrEqual(30);
      expect(saved.rows).toBeLessThan(EMPLOYEES);
      // A page that was being written when the process died.
      appendFileSync(file, 'mce_half-written,row');

      const resumed = await runCli([...args, '--resume'], {
        env: { COMPPLAN_API_KEY: slowKey },
        timeoutMs: 30_000,
      });
      expect(resumed).toMatchObject({ code: 0, stderr: '' });
      expect(existsSync(state)).toBe(false);
      const records = csvRecords(readFileSync(file, 'utf8').slice(1));
      expect(records.map((record) => record.id)).toEqual(employeeIdsInOrder(EMPLOYEES));

      const nothingLeft = await runCli([...args, '--resume'], {
        env: { COMPPLAN_API_KEY: slowKey },
      });
      expect(nothingLeft.code).toBe(1);
      expect(nothingLeft.stderr).toContain('nothing to resume');
    });
  });
});
