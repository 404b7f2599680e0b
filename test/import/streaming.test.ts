// The streaming import (docs/import-format.md, "Memory and the transaction"): records are
// read, validated and staged as a file is read, inside the import's one transaction, on
// every database the suite runs. The real command line reads the files and standard input.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { ImportError } from '../../src/import/errors.js';
import { importDataSet, importRecords } from '../../src/import/load.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { JSON_MAX_BYTES, recordsOfStream } from '../../src/import/source.js';
import { acmeDataSet, globexDataSet } from '../fixtures/data-sets.js';
import { cliEnvironment, REPO_ROOT, stopProcess } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dumpTables } from '../helpers/snapshot.js';
import { probeFor, waitForTransaction } from '../helpers/transaction-probe.js';

const BIN = join(REPO_ROOT, 'bin', 'compplan.js');
const BIG_CYCLE = 'mc_80000000-0000-4000-8000-000000000001';
const NOT_IMPORTED = 'compplan: the data set was not imported; nothing changed.\n';

type Employee = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];

/** Employee `i`; `series` keeps the ids of one test's data apart from another's. */
function person(i: number, series = 0): Employee {
  return {
    id: `mce_8${series}000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    email: `person${i}@initech.example`,
    firstName: `First${i}`,
    lastName: `Last${i % 97}`,
    currencyCode: i % 2 === 0 ? 'USD' : 'EUR',
    eligibilityStatus: 'eligible',
    columns: { department: { name: 'Department', type: 'text', value: `D${i % 7}` } },
  };
}

const ORGANIZATION = { slug: 'initech', name: 'Initech', apiKeysEnabled: true };
const CYCLE_FIELDS = {
  id: BIG_CYCLE,
  name: 'Big cycle',
  status: 'active' as const,
  startDate: '2026-01-01T00:00:00.000Z',
  endDate: '2026-02-01T00:00:00.000Z',
  createdDate: '2025-12-01T00:00:00.000Z',
  currency: 'USD',
};

function bigDataSet(count: number, series = 0): DataSetInput {
  return {
    organization: ORGANIZATION,
    meritCycles: [
      { ...CYCLE_FIELDS, employees: Array.from({ length: count }, (_, i) => person(i, series)) },
    ],
  };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Peak resident memory of the import process (VmHWM), MiB. */
  peakMiB: number;
}

/** `compplan import ARG` as a child process; its peak RSS sampled from /proc every 20 ms. */
async function runImport(
  database: DatabaseConfig,
  arg: string,
  input?: (child: ChildProcess) => void,
): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'import', arg], {
    cwd: REPO_ROOT,
    env: cliEnvironment({
      LOG_LEVEL: 'silent',
      DATABASE_URL: database.dialect === 'sqlite' ? `sqlite:${database.path}` : database.url,
    }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdin?.on('error', () => {});
  let peakKib = 0;
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      peakKib = Math.max(peakKib, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    } catch {
      // ended between two samples
    }
  };
  const timer = setInterval(sample, 20);
  if (input) input(child);
  else child.stdin?.end();
  const [code] = (await once(child, 'close')) as [number | null];
  clearInterval(timer);
  return { code, stdout, stderr, peakMiB: peakKib / 1024 };
}

const children: ChildProcess[] = [];

describe('streaming import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'compplan-stream-'));
  let database: TestDatabase;
  let server: TestServer;
  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startTestServer({
      database: database.config,
      dataSets: [acmeDataSet(), globexDataSet()],
    });
  });
  afterAll(async () => {
    await Promise.all(children.map((child) => stopProcess(child, 2_000)));
    await server.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('NDJSON from standard input: a bad email on line 20,003, after 20,000 good employees were staged, rolls back everything and names that line', async () => {
    const before = await dumpTables(server.database.db);
    const employees = Array.from({ length: 20_001 }, (_, i) => person(i));
    const last = employees[20_000] as Employee;
    last.email = 'not-an-email';
    const run = await runImport(database.config, '-', (child) => {
      // Written as a consumer reads it: the import reads standard input as a stream.
      const lines = [
        JSON.stringify({ organization: ORGANIZATION }),
        JSON.stringify({ meritCycle: CYCLE_FIELDS }),
        ...employees.map((employee) => JSON.stringify({ employee, meritCycle: BIG_CYCLE })),
      ];
      child.stdin?.end(`${lines.join('\n')}\n`);
    });
    expect(run).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `${NOT_IMPORTED}line 20003: meritCycles[0].employees[20000].email: must be an email address\n`,
    });
    expect(await dumpTables(server.database.db)).toEqual(before);
  }, 60_000);

  it('SIGTERM while a file of 100,000 employees is being read in the worker thread and staged: exit 143, one line, nothing changed, the process gone at once', async () => {
    const before = await dumpTables(server.database.db);
    const file = join(dir, 'interrupted.ndjson');
    const fd = openSync(file, 'w');
    writeSync(fd, `${JSON.stringify({ organization: ORGANIZATION })}\n`);
    writeSync(fd, `${JSON.stringify({ meritCycle: { ...CYCLE_FIELDS, name: 'Stopped' } })}\n`);
    for (let start = 0; start < 100_000; start += 1_000) {
      let lines = '';
      for (let i = start; i < start + 1_000; i++) {
        lines += `${JSON.stringify({ employee: person(i, 3), meritCycle: BIG_CYCLE })}\n`;
      }
      writeSync(fd, lines);
    }
    closeSync(fd);
    // Signalled once the import's transaction has begun, as the probe sees it from outside:
    // its handler of SIGTERM is installed before that (src/cli/interruption.ts), and the
    // whole file takes several seconds more to read and stage.
    const probe = await probeFor(database.config);
    let signalled = 0;
    let waiting: Promise<void> = Promise.resolve();
    const run = await runImport(database.config, file, (child) => {
      child.stdin?.end();
      let output = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
      });
      waiting = waitForTransaction(probe, child, () => output).then(() => {
        signalled = performance.now();
        child.kill('SIGTERM');
      });
      // Awaited below, once the process has ended; not an unhandled rejection meanwhile.
      waiting.catch(() => undefined);
    });
    await waiting;
    await probe.close();
    const exited = performance.now() - signalled;
    expect(run).toMatchObject({
      code: 143,
      stdout: '',
      stderr: 'compplan: interrupted; nothing changed.\n',
    });
    expect(exited).toBeLessThan(2_000);
    expect(await dumpTables(server.database.db)).toEqual(before);
    rmSync(file);
  }, 60_000);

  it('an NDJSON file of 400 MB (30,000 employees, the rest blank lines of white space) loads with a peak RSS under 250 MB: memory does not grow with the file', async () => {
    const file = join(dir, 'large.ndjson');
    const fd = openSync(file, 'w');
    const padding = `${' '.repeat(14_500)}\n`;
    writeSync(fd, `${JSON.stringify({ organization: ORGANIZATION })}\n`);
    writeSync(fd, `${JSON.stringify({ meritCycle: CYCLE_FIELDS })}\n`);
    let bytes = 0;
    for (let i = 0; i < 30_000; i++) {
      const employee = JSON.stringify({ employee: person(i), meritCycle: BIG_CYCLE });
      bytes += writeSync(fd, `${padding}\t\r\n${employee}\n`);
    }
    closeSync(fd);
    expect(bytes).toBeGreaterThan(400 * 2 ** 20);

    const run = await runImport(database.config, file);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        'Imported initech (new organisation):',
        '  merit cycles: 1 created, 0 updated, 0 unchanged',
        '  employees:    30000 created, 0 updated, 0 unchanged, 0 removed',
        '',
      ].join('\n'),
    );
    expect(run.peakMiB).toBeGreaterThan(0);
    expect(run.peakMiB).toBeLessThan(250);
    rmSync(file);
  }, 120_000);

  it(`a JSON file over ${JSON_MAX_BYTES / 2 ** 20} MiB, or JSON on standard input that does not end, is refused once that much is read: one message, nothing changed`, async () => {
    const before = await dumpTables(server.database.db);
    // A data set that would load, made larger than the limit by white space at its end.
    const dataSet = `${JSON.stringify(bigDataSet(100, 4))}\n`;
    const file = join(dir, 'too-large.json');
    writeFileSync(file, dataSet + ' '.repeat(JSON_MAX_BYTES + 1 - Buffer.byteLength(dataSet)));
    expect(statSync(file).size).toBe(JSON_MAX_BYTES + 1);
    const refused = `${NOT_IMPORTED}the file is larger than ${JSON_MAX_BYTES / 2 ** 20} MiB, the limit for a JSON data set, which is read whole; give a larger data set as NDJSON, which is read line by line (docs/import-format.md)\n`;
    expect(await runImport(database.config, file)).toMatchObject({
      code: 1,
      stdout: '',
      stderr: refused,
    });
    rmSync(file);
    expect(await dumpTables(server.database.db)).toEqual(before);

    // Standard input: the same data set, then white space without end (given until the
    // import stops reading, or 256 MiB).
    let written = 0;
    const run = await runImport(database.config, '-', (child) => {
      const stdin = child.stdin as Writable;
      const filler = Buffer.alloc(64 * 1024, ' ');
      const write = () => {
        while (written < 256 * 2 ** 20 && !stdin.destroyed) {
          const chunk = written === 0 ? Buffer.from(dataSet) : filler;
          written += chunk.length;
          if (!stdin.write(chunk)) return void stdin.once('drain', write);
        }
        stdin.end();
      };
      write();
    });
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: refused });
    // What was written and not read waits in the pipe (64 KiB) and the stream's buffer.
    expect(written).toBeLessThanOrEqual(JSON_MAX_BYTES + 2 * 2 ** 20);
    expect(run.peakMiB).toBeLessThan(250);
    expect(await dumpTables(server.database.db)).toEqual(before);
  }, 60_000);

  it('two employees 12,000 apart (different staging batches) may swap emails; the rest is unchanged', async () => {
    const dataSet = bigDataSet(12_000, 1);
    dataSet.organization = { ...ORGANIZATION, slug: 'initech-swap' };
    dataSet.meritCycles[0] = {
      ...(dataSet.meritCycles[0] as DataSetInput['meritCycles'][number]),
      id: 'mc_80000000-0000-4000-8000-000000000002',
      name: 'Swap cycle',
    };
    await server.load(dataSet);
    const employees = dataSet.meritCycles[0]?.employees ?? never();
    const [first, last] = [employees[0] ?? never(), employees[11_999] ?? never()];
    [first.email, last.email] = [last.email, first.email];
    expect(await server.load(dataSet)).toEqual({
      organization: { slug: 'initech-swap', created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 1 },
      employees: { created: 0, updated: 2, unchanged: 11_998, removed: 0 },
    });
    const rows = await server.database.db
      .selectFrom('merit_cycle_employees')
      .select(['id', 'email', 'body'])
      .where('id', 'in', [first.id ?? '', last.id ?? ''])
      .orderBy('id')
      .execute();
    expect(rows.map((row) => [row.id, row.email, JSON.parse(row.body).email])).toEqual([
      [first.id, 'person11999@initech.example', 'person11999@initech.example'],
      [last.id, 'person0@initech.example', 'person0@initech.example'],
    ]);
  }, 60_000);

  it('an employee matched by email keeps its stored id, also in the body it serves', async () => {
    const withoutIds = (dataSet: DataSetInput) => ({
      ...dataSet,
      organization: { ...ORGANIZATION, slug: 'initech-noids' },
      meritCycles: dataSet.meritCycles.map((cycle) => ({
        ...cycle,
        id: undefined,
        employees: cycle.employees?.map(({ id: _id, ...employee }) => employee),
      })),
    });
    await server.load(withoutIds(bigDataSet(3)));
    const changed = withoutIds(bigDataSet(3));
    const employee = changed.meritCycles[0]?.employees?.[1] ?? never();
    employee.firstName = 'Renamed';
    expect((await server.load(changed)).employees).toEqual({
      created: 0,
      updated: 1,
      unchanged: 2,
      removed: 0,
    });
    const rows = await server.database.db
      .selectFrom('merit_cycle_employees')
      .select(['id', 'first_name', 'body'])
      .where('email', '=', 'person1@initech.example')
      .where('organization_id', 'in', (query) =>
        query.selectFrom('organizations').select('id').where('slug', '=', 'initech-noids'),
      )
      .execute();
    expect(rows).toHaveLength(1);
    const body = JSON.parse(rows[0]?.body ?? '{}');
    expect(body).toMatchObject({ id: rows[0]?.id, firstName: 'Renamed' });
  });

  it.each<[string, (dataSet: DataSetInput) => void, string[]]>([
    [
      'an email repeated 11,999 records later',
      (d) => {
        const employees = d.meritCycles[0]?.employees ?? never();
        (employees[11_999] as Employee).email = 'PERSON0@initech.example';
      },
      [
        'meritCycles[0].employees[11999].email: repeats the email of employees[0] (emails compare case-insensitively)',
      ],
    ],
    [
      'ids repeated in a cycle and across cycles, and a cycle id and name given twice',
      (d) => {
        const cycle = d.meritCycles[0] ?? never();
        const employees = cycle.employees ?? never();
        (employees[7_000] as Employee).id = (employees[3] as Employee).id;
        d.meritCycles.push({
          ...CYCLE_FIELDS,
          employees: [person(5), { ...person(20_000) }, person(6)],
        });
      },
      [
        'meritCycles[0].employees[7000].id: repeats the id of employees[3]',
        'meritCycles[1].id: repeats the id of meritCycles[0]',
        'meritCycles[1].name: repeats the name of meritCycles[0]',
        'meritCycles[1].employees[0].id: repeats the id of meritCycles[0].employees[5]: an employee id belongs to one merit cycle',
        'meritCycles[1].employees[2].id: repeats the id of meritCycles[0].employees[6]: an employee id belongs to one merit cycle',
      ],
    ],
  ])(
    'the loader reports %s at their JSON paths, each naming the first, and changes nothing',
    async (_label, mutate, expected) => {
      const dataSet = bigDataSet(12_000);
      mutate(dataSet);
      const before = await dumpTables(server.database.db);
      const error = await importDataSet(server.database, dataSet).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).lines).toEqual(expected);
      expect(await dumpTables(server.database.db)).toEqual(before);
    },
    60_000,
  );

  it('JSON read in 7-character chunks, with keys in any order, loads what the whole text gives', async () => {
    const dataSet = acmeDataSet();
    // meritCycles before organization; each cycle's employees before its other fields.
    const reordered = {
      meritCycles: dataSet.meritCycles.map(({ employees, ...fields }) =>
        employees ? { employees, ...fields } : fields,
      ),
      organization: dataSet.organization,
    };
    const text = JSON.stringify(reordered, null, 1);
    const chunks = async function* () {
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
    };
    const before = await dumpTables(server.database.db);
    expect(
      await importRecords(server.database, await recordsOfStream('data-set.json', chunks())),
    ).toEqual({
      organization: { slug: 'acme', created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 6 },
      employees: { created: 0, updated: 0, unchanged: 11, removed: 0 },
    });
    expect(await dumpTables(server.database.db)).toEqual(before);
  });

  it('a syntax error late in a streamed JSON file names its line and column', async () => {
    const text = `{"organization": {"slug": "x", "name": "X"},\n"meritCycles": [\n${'{"name": "a"},\n'.repeat(5_000)}{"name": "b" "status": 1}]}`;
    const chunks = async function* () {
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length; i += 4_096) yield bytes.subarray(i, i + 4_096);
    };
    const error = await importRecords(
      server.database,
      await recordsOfStream('data-set.json', chunks()),
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      `not valid JSON (line 5003, column 14): Expected ',' or '}' after property value in JSON at position ${text.indexOf('"status"')}`,
    );
  });
});

function never(): never {
  throw new Error('fixture changed');
}
