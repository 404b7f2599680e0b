// compplan migrate, demo and the failure paths of orgs set (README.md), run as
// the compiled program. (orgs list and orgs set … enabled|disabled: see keys.test.ts.)
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditEntries,
  dumpDatabase,
  runCli,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('compplan migrate, demo, orgs set', () => {
  let db: TempDatabase;
  beforeAll(() => {
    db = tempDatabase();
  });
  afterAll(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('migrate applies the migrations to a new database, then reports that the schema is up to date', async () => {
    expect(existsSync(db.path)).toBe(false);
    const first = await runCli(['migrate'], { env: db.env });
    expect(first).toEqual({
      code: 0,
      signal: null,
      stdout: expect.stringMatching(/^Applied \d+ migration\(s\): 0001-initial(, [\w-]+)*\n$/),
      stderr: '',
    });
    expect(Object.keys(dumpDatabase(db.path))).toEqual(
      expect.arrayContaining([
        'api_keys',
        'merit_cycle_employees',
        'merit_cycles',
        'organizations',
        'server_secrets',
      ]),
    );

    const second = await runCli(['migrate'], { env: db.env });
    expect(second).toEqual({
      code: 0,
      signal: null,
      stdout: 'The database schema is up to date.\n',
      stderr: '',
    });
  });

  it('demo loads the organisation "demo" with cycles in every status and a few hundred employees in several currencies', async () => {
    const result = await runCli(['demo'], { env: db.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /^Imported demo \(new organisation\):\n {2}merit cycles: \d+ created, 0 updated, 0 unchanged\n {2}employees: {4}\d+ created, 0 updated, 0 unchanged, 0 removed\n/,
    );

    const orgs = await runCli(['orgs', 'list', '--json'], { env: db.env });
    expect(orgs.code).toBe(0);
    expect(JSON.parse(orgs.stdout)).toEqual([
      {
        slug: 'demo',
        name: expect.any(String),
        apiKeysEnabled: true,
        createdAt: expect.stringMatching(ISO_MS),
      },
    ]);

    const dump = dumpDatabase(db.path);
    const cycles = dump.merit_cycles as { status: string }[];
    expect(new Set(cycles.map((cycle) => cycle.status))).toEqual(
      new Set(['active', 'inactive', 'finalized']),
    );
    const employees = dump.merit_cycle_employees as { currency_code: string }[];
    expect(employees.length).toBeGreaterThanOrEqual(200);
    expect(new Set(employees.map((employee) => employee.currency_code)).size).toBeGreaterThan(2);
  });

  it('demo a second time changes nothing in any table but the audit log, where it is recorded, and reports everything unchanged', async () => {
    const before = dumpDatabase(db.path);
    const entriesBefore = auditEntries(db.path);
    const result = await runCli(['demo'], { env: db.env });
    expect(result.code).toBe(0);
    const cycles = before.merit_cycles?.length ?? 0;
    const employees = before.merit_cycle_employees?.length ?? 0;
    expect(result.stdout).toContain(
      `Imported demo:\n  merit cycles: 0 created, 0 updated, ${cycles} unchanged\n  employees:    0 created, 0 updated, ${employees} unchanged, 0 removed\n`,
    );
    expect(dumpDatabase(db.path)).toEqual(before);
    const entries = auditEntries(db.path);
    // The import is recorded, as every import is: that nothing changed is what it says.
    expect(entries.slice(0, entriesBefore.length)).toEqual(entriesBefore);
    expect(entries.slice(entriesBefore.length)).toMatchObject([
      {
        action: 'import',
        actor: 'cli',
        details: JSON.stringify({
          organizationCreated: false,
          meritCycles: { created: 0, updated: 0, unchanged: cycles },
          employees: { created: 0, updated: 0, unchanged: employees, removed: 0 },
          prune: false,
        }),
      },
    ]);
  });

  it('orgs set with an unknown slug exits 1 with a one-line message and changes nothing', async () => {
    const before = dumpDatabase(db.path);
    const result = await runCli(['orgs', 'set', 'nope', '--api-keys', 'enabled'], {
      env: db.env,
    });
    expect(result).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: 'compplan: No organisation with slug "nope"\n',
    });
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  it('orgs set with a value other than enabled|disabled exits 2 naming the option and changes nothing', async () => {
    const before = dumpDatabase(db.path);
    const result = await runCli(['orgs', 'set', 'demo', '--api-keys', 'maybe'], { env: db.env });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe(
      "error: option '--api-keys <state>' argument 'maybe' is invalid. Allowed choices are enabled, disabled.",
    );
    expect(dumpDatabase(db.path)).toEqual(before);
  });
});
