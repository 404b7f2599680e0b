// Import faults, with the real command line (`node bin/compplan.js import`) on every
// database the suite runs:
// - an import killed with SIGKILL at several points — before its transaction, as it
//   begins, 15 %, 30 % and 45 % of the way through — leaves the database
//   exactly as it was (every table dumped and compared), and the next import works;
// - two imports of the same organisation started at once never interleave: the result is
//   exactly that of running one, then the other (in the order they committed).
// No hook in the code is needed: the test watches the database for the import's
// transaction (test/helpers/transaction-probe.ts) and kills the process a measured time
// later.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { importDataSet } from '../../src/import/load.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { acmeDataSet, globexDataSet } from '../fixtures/data-sets.js';
import { cliEnvironment, REPO_ROOT, stopProcess } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { dumpTables } from '../helpers/snapshot.js';
import { probeFor, waitForTransaction } from '../helpers/transaction-probe.js';

const BIN = join(REPO_ROOT, 'bin', 'compplan.js');
const BIG_CYCLE = 'mc_70000000-0000-4000-8000-000000000001';
// Enough that the import's transaction lasts long enough here (about a second) to be
// killed at several measured points inside it.
const EMPLOYEES = 5_000;

/** Acme again, plus one cycle of `count` employees and changes to its existing cycles. */
function bigDataSet(count: number, department: string, from = 0): DataSetInput {
  const base = acmeDataSet();
  return {
    organization: { ...base.organization, name: `Acme (${department})` },
    meritCycles: [
      ...base.meritCycles.map((cycle) => ({ ...cycle, name: `${cycle.name} (${department})` })),
      {
        id: BIG_CYCLE,
        name: 'Big cycle',
        status: 'active',
        startDate: '2026-01-01T00:00:00.000Z',
        endDate: '2026-02-01T00:00:00.000Z',
        createdDate: '2025-12-01T00:00:00.000Z',
        currency: 'USD',
        exchangeRates: { EUR: department === 'A' ? 0.9 : 0.8 },
        employees: Array.from({ length: count }, (_, n) => {
          const i = from + n;
          return {
            id: `mce_70000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
            email: `person${i}@acme.example`,
            firstName: `First${i}`,
            lastName: `Last${i % 97}`,
            currencyCode: i % 2 === 0 ? 'USD' : 'EUR',
            eligibilityStatus: 'eligible' as const,
            columns: { department: { name: 'Department', type: 'text', value: department } },
          };
        }),
      },
    ],
  };
}

interface Run {
  child: ChildProcess;
  startedAt: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  output: () => string;
}

function startImport(database: DatabaseConfig, file: string): Run {
  const child = spawn(process.execPath, [BIN, 'import', file], {
    cwd: REPO_ROOT,
    env: cliEnvironment({
      LOG_LEVEL: 'silent',
      DATABASE_URL: database.dialect === 'sqlite' ? `sqlite:${database.path}` : database.url,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    at: Date.now(),
  }));
  return { child, startedAt: Date.now(), exited, output: () => output };
}

async function dump(database: DatabaseConfig) {
  const handle = openDatabase(database);
  try {
    return await dumpTables(handle.db);
  } finally {
    await handle.close();
  }
}

/** The data tables, without what differs between two databases loaded alike (ids, times). */
async function dataOf(database: DatabaseConfig) {
  const tables = await dump(database);
  const strip = (rows: unknown[] | undefined, drop: string[]) =>
    (rows ?? [])
      .map((row) =>
        JSON.stringify(
          Object.fromEntries(
            Object.entries(row as Record<string, unknown>).filter(([name]) => !drop.includes(name)),
          ),
        ),
      )
      .sort();
  return {
    organizations: strip(tables.organizations, ['id', 'created_at']),
    merit_cycles: strip(tables.merit_cycles, ['organization_id']),
    merit_cycle_employees: strip(tables.merit_cycle_employees, ['organization_id']),
  };
}

describe('import faults', () => {
  const dir = mkdtempSync(join(tmpdir(), 'compplan-faults-'));
  const databases: TestDatabase[] = [];
  const children: ChildProcess[] = [];
  const file = (name: string, dataSet: DataSetInput) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(dataSet));
    return path;
  };
  /** Loads data sets in this process, through the same import code the command runs. */
  async function load(database: DatabaseConfig, dataSets: DataSetInput[]): Promise<void> {
    const handle = openDatabase(database);
    try {
      await migrateToLatest(handle);
      for (const dataSet of dataSets) await importDataSet(handle, dataSet);
    } finally {
      await handle.close();
    }
  }

  /** A database of its own, holding Acme's data set (and Globex's when asked). */
  async function freshDatabase(withGlobex = false): Promise<DatabaseConfig> {
    const database = await createTestDatabase();
    databases.push(database);
    await load(database.config, withGlobex ? [acmeDataSet(), globexDataSet()] : [acmeDataSet()]);
    return database.config;
  }

  beforeAll(() => {
    expect(REPO_ROOT).toBeTruthy();
  });
  afterAll(async () => {
    await Promise.all(children.map((child) => stopProcess(child, 2_000)));
    for (const database of databases) await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('SIGKILL at any point of an import leaves every table exactly as it was; the next import then works', async () => {
    // Globex too: an import of Acme must not touch it either.
    const database = await freshDatabase(true);
    const bigFile = file('big.json', bigDataSet(EMPLOYEES, 'A'));
    const before = await dump(database);
    const probe = await probeFor(database);
    try {
      // Calibrate: how long the transaction of this import lasts here, from a copy; the
      // shorter of two runs, since one run beside a busy moment of the machine (other test
      // files run meanwhile) lasts longer than the killed runs may, and a kill point past
      // their end would find the import committed.
      let transactionMs = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 2; round++) {
        const scratch = await freshDatabase();
        const scratchProbe = await probeFor(scratch);
        const calibration = startImport(scratch, bigFile);
        children.push(calibration.child);
        const began = await waitForTransaction(scratchProbe, calibration.child, calibration.output);
        // Its end as the probe sees it, not the process's exit, which comes later by the
        // time the process takes to stop (more on a loaded machine).
        while (await scratchProbe.inTransaction()) await sleep(5);
        transactionMs = Math.min(transactionMs, Date.now() - began);
        const finished = await calibration.exited;
        await scratchProbe.close();
        expect(finished.code, calibration.output()).toBe(0);
      }
      expect(transactionMs).toBeGreaterThan(100);

      const killPoints: [string, number | 'before'][] = [
        ['before its transaction', 'before'],
        ['as its transaction begins', 0],
        // Kept well before the end: the transaction's length varies with the machine's load
        // (a kill at three fifths once found the import committed: its run was that much
        // quicker than the calibration's, both runs beside other test files).
        ['15 % through', Math.round(transactionMs * 0.15)],
        ['30 % through', Math.round(transactionMs * 0.3)],
        ['45 % through', Math.round(transactionMs * 0.45)],
      ];
      for (const [when, delay] of killPoints) {
        const run = startImport(database, bigFile);
        children.push(run.child);
        if (delay === 'before') await sleep(50);
        else {
          await waitForTransaction(probe, run.child, run.output);
          await sleep(delay);
        }
        run.child.kill('SIGKILL');
        const ended = await run.exited;
        expect({ when, signal: ended.signal }).toEqual({ when, signal: 'SIGKILL' });
        expect(await dump(database), `killed ${when}`).toEqual(before);
      }

      // Nothing left half-done in the way: the same import now runs to its end.
      const complete = startImport(database, bigFile);
      children.push(complete.child);
      expect((await complete.exited).code, complete.output()).toBe(0);
      expect(complete.output()).toContain(`${EMPLOYEES} created`);
      if (database.dialect === 'sqlite') {
        const sqlite = new SQLite(database.path, { readonly: true });
        expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
        sqlite.close();
      }
    } finally {
      await probe.close();
    }
  }, 240_000);

  it('two imports of one organisation at once never interleave: the result is one, then the other', async () => {
    // Overlapping employees (1,250–2,499 are in both) with different departments, and
    // every cycle renamed differently: any interleaving would leave a mixture.
    const fileA = file('a.json', bigDataSet(2_500, 'A', 0));
    const fileB = file('b.json', bigDataSet(2_500, 'B', 1_250));
    const database = await freshDatabase();
    const runA = startImport(database, fileA);
    const runB = startImport(database, fileB);
    children.push(runA.child, runB.child);
    const [endA, endB] = await Promise.all([runA.exited, runB.exited]);
    expect(endA.code, runA.output()).toBe(0);
    expect(endB.code, runB.output()).toBe(0);
    // They ran at the same time: each started before the other ended.
    expect(runA.startedAt).toBeLessThan(endB.at);
    expect(runB.startedAt).toBeLessThan(endA.at);

    // The same two data sets, one after the other in the order they committed.
    const [a, b] = [bigDataSet(2_500, 'A', 0), bigDataSet(2_500, 'B', 1_250)];
    const serial = await freshDatabase();
    await load(serial, endA.at <= endB.at ? [a, b] : [b, a]);
    expect(await dataOf(database)).toEqual(await dataOf(serial));
  }, 240_000);
});
