// compplan keys create --rows / --reports-to and orgs set --manager-column (docs/api-keys.md,
// "Slices"; decisions §12, "Bad input"): every refusal is one clear line with the exit
// status of the other key refusals, and writes nothing — no key, no slice; values with
// commas and quotes work when quoted; a slice that reads nobody today is made and said so;
// a reporting loop in the data is read without looping and reported by the import and by
// orgs set. The data is loaded in-process (test/helpers/set-up.ts); the commands spawned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import {
  dumpDatabase,
  runAllCli,
  runCli,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';
import { importDataSet } from '../helpers/set-up.js';

const ORG = 'rowco';
const CYCLE = 'mc_71000000-0000-4000-8000-000000000001';

type Employee = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];

const employee = (
  n: number,
  department: string,
  manager: string | null,
  team: string | null = null,
): Employee => ({
  id: `mce_71000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  email: `p${n}@rowco.example`,
  firstName: `First${n}`,
  lastName: `Last${n}`,
  currencyCode: 'USD',
  eligibilityStatus: 'eligible',
  columns: {
    department: { name: 'Department', type: 'text', value: department },
    team: { name: 'Team', type: 'text', value: team },
    managerEmail: { name: 'Manager email', type: 'text', value: manager },
    level: { name: 'Level', type: 'number', value: `${n}` },
    basePay: { name: 'Base pay', type: 'currency', value: { USD: `${100000 + n}.00` } },
    employee: {
      name: 'Employee',
      type: 'composite',
      value: { jobLevel: `L${n}`, targetBonus: { USD: '1000.00' } },
    },
  },
});

/**
 * p1 and p2 report to each other (a loop); p3 reports to p1; p4 is in "Sales, EMEA" and
 * its team has quotes in its name.
 */
const dataSet = (): DataSetInput => ({
  organization: { slug: ORG, name: 'Row Co', apiKeysEnabled: true },
  meritCycles: [
    {
      id: CYCLE,
      name: 'Row 2025',
      status: 'active',
      startDate: '2025-01-01T00:00:00.000Z',
      endDate: '2025-03-31T23:59:59.999Z',
      createdDate: '2024-11-15T09:30:00.000Z',
      currency: 'USD',
      exchangeRates: {},
      employees: [
        employee(1, 'Engineering', 'p2@rowco.example'),
        employee(2, 'Engineering', 'P1@rowco.example'),
        employee(3, 'Sales', 'p1@rowco.example'),
        employee(4, 'Sales, EMEA', null, 'Say "hi"'),
      ],
    },
  ],
});

/** What a refusal must leave as it was: keys, slices and their members, the organisation. */
const WATCHED = ['api_keys', 'row_slices', 'row_slice_members', 'organizations'];
const watched = (db: TempDatabase) => {
  const dump = dumpDatabase(db.path);
  return Object.fromEntries(WATCHED.map((table) => [table, dump[table]]));
};

const LOOP =
  'Reporting loop in mc_71000000-0000-4000-8000-000000000001: p1@rowco.example → p2@rowco.example → p1@rowco.example (each reports to the next). Slices that follow reporting lines read it without looping; fix the managers in your data.';

describe('compplan keys create --rows / --reports-to, orgs set --manager-column', () => {
  let db: TempDatabase;
  const create = (...flags: string[]) => ['keys', 'create', '--org', ORG, '--name', 'k', ...flags];

  beforeAll(async () => {
    db = tempDatabase();
    await importDataSet(db.url, dataSet());
  });
  afterAll(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('refuses each bad slice and manager column in one line, with the exit status of any key refusal, and writes nothing', async () => {
    const before = watched(db);
    const tenThousand = Array.from({ length: 10_000 }, (_, i) => `v${i}`).join(', ');
    const cases: [string[], string][] = [
      // The reference: a key refusal that is not about slices.
      [create('--hide-columns', 'salary'), 'no column salary'],
      [
        create('--rows', 'departmnt = Sales'),
        `--rows: ${ORG} has no column departmnt; did you mean department?`,
      ],
      [
        create('--rows', 'level = 3'),
        '--rows: level is a number column, and a slice reads text columns only',
      ],
      [
        create('--rows', 'basePay = 100'),
        '--rows: basePay is a currency column, and a slice reads text columns only',
      ],
      [
        create('--rows', 'employee = L3'),
        '--rows: employee is a composite column; name one of its text parts, such as employee/jobLevel',
      ],
      [
        create('--rows', 'employee/targetBonus = 1'),
        '--rows: employee/targetBonus is a currency part',
      ],
      [create('--rows', 'department in ()'), '--rows: department in () names no value'],
      [create('--rows', 'department = "Sales'), '--rows could not be read'],
      [
        create('--rows', `department in (${tenThousand})`),
        '--rows names 10,000 values; a slice takes at most 1,000',
      ],
      [create('--reports-to', 'p1@rowco.example'), `--reports-to needs ${ORG}'s manager column`],
      [
        ['orgs', 'set', ORG, '--manager-column', 'level'],
        '--manager-column: level is a number column',
      ],
      [
        ['orgs', 'set', ORG, '--manager-column', 'boss'],
        `--manager-column: ${ORG} has no column boss`,
      ],
    ];
    const results = await runAllCli(
      cases.map(([args]) => args),
      { env: db.env },
    );
    const reference = results[0];
    expect(reference?.code).not.toBe(0);
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index];
      const label = args.join(' ').slice(0, 120);
      expect({ code: result?.code, stdout: result?.stdout }, label).toEqual({
        code: reference?.code,
        stdout: '',
      });
      // One line, naming what is wrong.
      expect(result?.stderr.trimEnd().split('\n'), label).toHaveLength(1);
      expect(result?.stderr, label).toContain(message);
    }
    expect(watched(db)).toEqual(before);
  });

  it('names the manager column, reporting the loop in the data; an unknown manager is refused; a key through the loop reads it without looping', async () => {
    const set = await runCli(['orgs', 'set', ORG, '--manager-column', 'managerEmail'], {
      env: db.env,
    });
    expect(set).toEqual({
      code: 0,
      signal: null,
      stdout: `${ORG}'s manager column is now managerEmail: keys made with --reports-to follow it.\n${LOOP}\n`,
      stderr: '',
    });

    const before = watched(db);
    const unknown = await runCli(create('--reports-to', 'nobody@rowco.example'), { env: db.env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      `compplan: --reports-to: no employee with the email nobody@rowco.example in ${ORG}'s merit cycles; give the manager's email as the data has it\n`,
    );
    expect(watched(db)).toEqual(before);

    // p1's line: p2 (reports to p1), p1 itself (reports to p2), p3 (reports to p1).
    const [line, sales, team, nobody] = await runAllCli(
      [
        create('--reports-to', 'P1@rowco.example', '--json'),
        create('--rows', 'department = "Sales, EMEA"', '--json'),
        create('--rows', `team = "Say ""hi""" and department in ('Sales, EMEA', Sales)`, '--json'),
        create('--rows', 'department = sales'),
      ],
      { env: db.env },
    );
    expect(JSON.parse(line?.stdout ?? '').rowSlice).toEqual({
      id: expect.stringMatching(/^sl_[0-9a-f]{32}$/),
      description: 'reports to p1@rowco.example',
      employees: 3,
    });
    expect(JSON.parse(sales?.stdout ?? '').rowSlice).toMatchObject({
      description: 'department = "Sales, EMEA"',
      employees: 1,
    });
    expect(JSON.parse(team?.stdout ?? '').rowSlice).toMatchObject({
      description: 'department in (Sales, "Sales, EMEA") and team = "Say ""hi"""',
      employees: 1,
    });
    // Letter case as stored: nobody is in "sales", and the key says so.
    expect(nobody?.code).toBe(0);
    expect(nobody?.stdout).toContain(
      'It reads only the employees where department = sales: no employee today: check the values and the letter case, as the data writes them.',
    );
    const slices = dumpDatabase(db.path).row_slice_members as { employee_id: string }[];
    expect(slices).toHaveLength(3 + 1 + 1);

    // An import of the same data still has the loop: its summary says so.
    const file = db.writeFile('again.json', JSON.stringify(dataSet()));
    const imported = await runCli(['import', file], { env: db.env });
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(`  ${LOOP}\n`);
  });
});
