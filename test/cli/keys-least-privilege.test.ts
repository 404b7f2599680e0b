// compplan keys create --cycles/--hide-columns/--expires-in/--expires-at, keys roll and
// what keys list shows of them (docs/api-keys.md), against a real `compplan serve`
// on the same database. Bad input: one line on standard error, exit 1, nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE, globexDataSet } from '../fixtures/data-sets.js';
import {
  type CliServer,
  dumpDatabase,
  runCli,
  startCliServer,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';
import { importDataSet } from '../helpers/set-up.js';

const DAY = 86_400_000;
const LIST = '/v1/compensationPlanning/meritCycles';

interface ListedKey {
  id: string;
  name: string;
  prefix: string;
  cycles: string[] | null;
  hiddenColumns: string[];
  hiddenColumnTypes: string[];
  expiresAt: string | null;
  expired: boolean;
  expiringSoon: boolean;
  previousSecretExpiresAt: string | null;
}

/**
 * Every row of the database but what the running server records on its own schedule,
 * whatever a command does meanwhile: the last use of keys (every 15 seconds), and the audit
 * log's request entries (every second), which dumpDatabase leaves out.
 */
function withoutLastUse(path: string): Record<string, unknown[]> {
  const dump = dumpDatabase(path);
  dump.api_keys = (dump.api_keys ?? []).map((row) => {
    const { last_used_at, last_used_address, ...rest } = row as Record<string, unknown>;
    return rest;
  });
  return dump;
}

describe('compplan keys: least-privilege keys', () => {
  let db: TempDatabase;
  let server: CliServer;
  const keys = (args: string[]) => runCli(['keys', ...args], { env: db.env });
  const get = (path: string, key: string) =>
    fetch(`${server.url}${path}`, { headers: { 'x-api-key': key } });
  const listed = async () =>
    JSON.parse((await keys(['list', '--org', ACME, '--json'])).stdout) as ListedKey[];

  beforeAll(async () => {
    db = tempDatabase();
    for (const dataSet of [acmeDataSet(), globexDataSet()]) {
      await importDataSet(db.url, dataSet);
    }
    server = await startCliServer([], { ...db.env, LOG_LEVEL: 'warn' });
  });
  afterAll(async () => {
    await server?.stop();
    await stopAllProcesses();
    db?.remove();
  });

  it('create --cycles --hide-columns --expires-in 90d --json: the key reads only those cycles, without those columns, and list shows it all', async () => {
    const before = Date.now();
    const result = await keys([
      'create',
      '--org',
      ACME,
      '--name',
      'Engineering dashboard',
      '--cycles',
      `${CYCLE.midYear}, ${CYCLE.annual2025}`,
      '--hide-columns',
      'employee,department',
      '--expires-in',
      '90d',
      '--json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as { id: string; key: string; expiresAt: string };
    // What it just set, as keys list shows it: cycles and columns sorted, the expiry.
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^cpk_/),
      org: ACME,
      name: 'Engineering dashboard',
      createdAt: expect.any(String),
      cycles: [CYCLE.annual2025, CYCLE.midYear],
      hiddenColumns: ['department', 'employee'],
      hiddenColumnTypes: [],
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
      allowedAddresses: null,
      rowSlice: null,
    });

    const cycles = (await (await get(LIST, created.key)).json()) as { data: { id: string }[] };
    expect(cycles.data.map((c) => c.id)).toEqual([CYCLE.annual2025, CYCLE.midYear]);
    expect((await get(`${LIST}/${CYCLE.offset}`, created.key)).status).toBe(404);
    const employees = (await (
      await get(`${LIST}/${CYCLE.annual2025}/employees`, created.key)
    ).json()) as {
      data: { columns: Record<string, unknown> }[];
    };
    expect(employees.data.length).toBe(3);
    for (const employee of employees.data) {
      expect(Object.keys(employee.columns)).not.toContain('employee');
      expect(Object.keys(employee.columns)).not.toContain('department');
    }

    const key = (await listed()).find((k) => k.id === created.id);
    expect(key).toMatchObject({
      name: 'Engineering dashboard',
      cycles: [CYCLE.annual2025, CYCLE.midYear],
      hiddenColumns: ['department', 'employee'],
      expired: false,
      expiringSoon: false,
      previousSecretExpiresAt: null,
    });
    expect(key?.expiresAt).toBe(created.expiresAt);
    const expiresAt = Date.parse(key?.expiresAt ?? '');
    expect(expiresAt).toBeGreaterThanOrEqual(before + 90 * DAY);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 90 * DAY);
  });

  it('create --hide-column-types number,composite: no column of those types in what it reads; create, list (JSON and text) and roll show the types', async () => {
    const result = await keys([
      'create',
      '--org',
      ACME,
      '--name',
      'No numbers',
      '--hide-column-types',
      'number, composite',
      '--json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as { id: string; key: string };
    expect(created).toMatchObject({
      hiddenColumns: [],
      hiddenColumnTypes: ['composite', 'number'],
    });
    const page = (await (
      await get(`${LIST}/${CYCLE.annual2025}/employees`, created.key)
    ).json()) as { data: { columns: Record<string, unknown> }[] };
    // Grace Hopper (first in list order) has a number, tenure; everyone's employee is a
    // composite.
    expect(page.data.map((employee) => Object.keys(employee.columns))).toEqual([
      ['department', 'notes', 'tags'],
      ['department'],
      ['department'],
    ]);
    expect((await listed()).find((k) => k.id === created.id)).toMatchObject({
      hiddenColumns: [],
      hiddenColumnTypes: ['composite', 'number'],
    });
    const line = (await keys(['list', '--org', ACME])).stdout
      .split('\n')
      .find((l) => l.startsWith(created.id));
    expect(line).toMatch(/ +No numbers +cpk_\S+ +all +none +composite,number +any +all +never /);
    const rolled = JSON.parse((await keys(['roll', created.id, '--json'])).stdout) as {
      hiddenColumnTypes: string[];
    };
    expect(rolled.hiddenColumnTypes).toEqual(['composite', 'number']);

    const text = await keys(['create', '--org', ACME, '--hide-column-types', 'number']);
    expect(text.stdout).toContain(
      'Employees it reads have no number columns or parts, also in later imports.',
    );
  });

  it('create --hide-columns with a column no data has yet: refused, unless --allow-unknown-columns', async () => {
    const refused = await keys(['create', '--org', ACME, '--hide-columns', 'basePay', '--json']);
    expect(refused.code).toBe(1);
    const result = await keys([
      'create',
      '--org',
      ACME,
      '--hide-columns',
      'basePay,department',
      '--allow-unknown-columns',
      '--json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ hiddenColumns: ['basePay', 'department'] });
  });

  it('create (text) says what the key may read and until when; list flags a key that expires within 7 days', async () => {
    const result = await keys([
      'create',
      '--org',
      ACME,
      '--name',
      'Short',
      '--cycles',
      CYCLE.offset,
      '--expires-in',
      '3d',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`It reads only the merit cycles ${CYCLE.offset}.`);
    expect(result.stdout).toMatch(/It expires at \d{4}-\d\d-\d\dT[\d:.]+Z\./);
    const id = /Created API key (key_\S+)/.exec(result.stdout)?.[1];

    expect((await listed()).find((k) => k.id === id)).toMatchObject({
      cycles: [CYCLE.offset],
      hiddenColumns: [],
      expiringSoon: true,
    });
    const text = (await keys(['list', '--org', ACME])).stdout.split('\n');
    const line = text.find((l) => l.startsWith(id ?? '-'));
    expect(line).toMatch(
      new RegExp(
        ` ${CYCLE.offset} +none +none +any +all +\\d{4}-[\\d\\-T:.]+Z +.* +never +active \\(EXPIRES WITHIN 7 DAYS\\)$`,
      ),
    );
  });

  it('roll ID --json: a new secret (once) with the same id, name and scope; the old secret keeps working for the grace; list shows until when', async () => {
    const made = await keys([
      'create',
      '--org',
      ACME,
      '--name',
      'To roll',
      '--cycles',
      CYCLE.annual2025,
      '--json',
    ]);
    const old = JSON.parse(made.stdout) as { id: string; key: string };
    expect((await get(LIST, old.key)).status).toBe(200);

    const before = Date.now();
    const result = await keys(['roll', old.id, '--grace', '2h', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rolled = JSON.parse(result.stdout) as Record<string, string>;
    expect(Object.keys(rolled)).toEqual([
      'id',
      'key',
      'org',
      'name',
      'cycles',
      'hiddenColumns',
      'hiddenColumnTypes',
      'expiresAt',
      'allowedAddresses',
      'rowSlice',
      'previousSecretExpiresAt',
    ]);
    expect(rolled).toMatchObject({
      id: old.id,
      org: ACME,
      name: 'To roll',
      cycles: [CYCLE.annual2025],
      hiddenColumns: [],
      expiresAt: null,
      allowedAddresses: null,
    });
    expect(rolled.key).toMatch(/^cpk_[0-9A-Za-z]{42}$/);
    expect(rolled.key).not.toBe(old.key);
    const graceEnd = Date.parse(rolled.previousSecretExpiresAt ?? '');
    expect(graceEnd).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
    expect(graceEnd).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000);

    for (const secret of [old.key, rolled.key ?? '']) {
      const response = await get(LIST, secret);
      expect(response.status).toBe(200);
      const ids = ((await response.json()) as { data: { id: string }[] }).data.map((c) => c.id);
      expect(ids).toEqual([CYCLE.annual2025]);
    }
    expect((await listed()).find((k) => k.id === old.id)).toMatchObject({
      name: 'To roll',
      prefix: rolled.key?.slice(0, 12),
      cycles: [CYCLE.annual2025],
      previousSecretExpiresAt: rolled.previousSecretExpiresAt,
    });

    const text = await keys(['roll', old.id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^Rolled API key key_\S+ \("To roll"\) of acme: same name and scope, new secret\.\n\n {2}cpk_\S+\n\nCopy it now: it is shown only this once and cannot be displayed again\.\nThe old secret keeps working until \S+Z, then gets 401\.\n$/,
    );
  });

  const refusals: [string, string[], string][] = [
    [
      'an unknown cycle id',
      ['--cycles', 'mc_00000000-0000-4000-8000-000000000000'],
      '--cycles: no merit cycle "mc_00000000-0000-4000-8000-000000000000" in acme',
    ],
    [
      'a cycle of another organisation',
      ['--cycles', `${CYCLE.annual2025},${CYCLE.globex}`],
      `--cycles: no merit cycle "${CYCLE.globex}" in acme`,
    ],
    [
      'an empty scope',
      ['--cycles', ' , '],
      '--cycles needs at least one merit cycle id (leave it out for every cycle)',
    ],
    ['no hidden column', ['--hide-columns', ''], '--hide-columns needs at least one column key'],
    [
      'a hidden column list ending in a comma',
      ['--hide-columns', 'salary,'],
      '--hide-columns has an empty item in "salary,": remove the extra comma',
    ],
    [
      'two commas together in hidden columns',
      ['--hide-columns', 'salary,,bonus'],
      '--hide-columns has an empty item in "salary,,bonus": remove the extra comma',
    ],
    [
      'a column no cycle of the organisation has (nothing near: its number and currency columns)',
      ['--hide-columns', 'salary,department'],
      "--hide-columns: no column salary; acme's currency and number columns are tenure (Tenure (years), number). To hide a column of data still to come, add --allow-unknown-columns.",
    ],
    [
      'a misspelt column (the nearest keys, with their names and types)',
      ['--hide-columns', 'departmnt,Employee'],
      '--hide-columns: no column departmnt; did you mean department (Department, text)? Also, no column Employee; did you mean employee (Employee, composite)? To hide a column of data still to come, add --allow-unknown-columns.',
    ],
    [
      'a part of a composite column (even for data still to come)',
      ['--hide-columns', 'employee/jobLevel', '--allow-unknown-columns'],
      '--hide-columns: employee/jobLevel is the text part jobLevel of the composite column employee (Employee, composite): a key hides whole columns, so hide employee, or every column and part of a type with --hide-column-types text.',
    ],
    [
      'a column given twice',
      ['--hide-columns', 'department, department'],
      '--hide-columns names department twice: give each once',
    ],
    [
      'only commas and spaces as hidden columns',
      ['--hide-columns', ' , '],
      '--hide-columns needs at least one column key',
    ],
    [
      'an unknown column type',
      ['--hide-column-types', 'currency,money'],
      '--hide-column-types: no column type money; the types are text, number, date, boolean, currency, composite',
    ],
    [
      'no column type',
      ['--hide-column-types', ''],
      '--hide-column-types needs at least one column type: text, number, date, boolean, currency, composite',
    ],
    [
      'a column type given twice',
      ['--hide-column-types', 'number,number'],
      '--hide-column-types names number twice: give each once',
    ],
    [
      'a cycle list starting with a comma',
      ['--cycles', `, ${CYCLE.annual2025}`],
      `--cycles has an empty item in ", ${CYCLE.annual2025}": remove the extra comma`,
    ],
    [
      'a duration that does not parse',
      ['--expires-in', 'soon'],
      '--expires-in must be a number and a unit, such as 90d, 24h or 30m; got "soon"',
    ],
    [
      'a duration without a unit',
      ['--expires-in', '90'],
      '--expires-in must be a number and a unit, such as 90d, 24h or 30m; got "90"',
    ],
    [
      'a negative duration',
      ['--expires-in', '-5d'],
      '--expires-in must be a number and a unit, such as 90d, 24h or 30m; got "-5d"',
    ],
    [
      'a date in the past',
      ['--expires-at', '2020-01-31'],
      '--expires-at 2020-01-31 is in the past',
    ],
    [
      'a date that does not exist',
      ['--expires-at', '2027-02-30'],
      '--expires-at must be a date (YYYY-MM-DD, the start of that day in UTC) or an ISO 8601 time with its offset; got "2027-02-30"',
    ],
    [
      'a date in another format',
      ['--expires-at', '31/01/2027'],
      '--expires-at must be a date (YYYY-MM-DD, the start of that day in UTC) or an ISO 8601 time with its offset; got "31/01/2027"',
    ],
    [
      'both expiry options',
      ['--expires-in', '90d', '--expires-at', '2099-01-31'],
      'Give --expires-in or --expires-at, not both',
    ],
  ];

  it.each(refusals)(
    'create with %s: one line, exit 1, nothing created',
    async (_, args, message) => {
      const before = withoutLastUse(db.path);
      const result = await keys(['create', '--org', ACME, ...args]);
      expect(result).toEqual({
        code: 1,
        signal: null,
        stdout: '',
        stderr: `compplan: ${message}\n`,
      });
      expect(withoutLastUse(db.path)).toEqual(before);
    },
  );

  it.each([
    ['a grace over 30 days', '31d', '--grace must be at most 30 days; got "31d"'],
    [
      'a grace that does not parse',
      'a day',
      '--grace must be a number and a unit, such as 90d, 24h or 30m; got "a day"',
    ],
  ])('roll with %s: one line, exit 1, nothing changed', async (_, grace, message) => {
    const id = (await listed())[0]?.id ?? '';
    const before = withoutLastUse(db.path);
    const result = await keys(['roll', id, '--grace', grace]);
    expect(result).toEqual({ code: 1, signal: null, stdout: '', stderr: `compplan: ${message}\n` });
    expect(withoutLastUse(db.path)).toEqual(before);
  });
});
