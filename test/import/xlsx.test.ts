// An Excel workbook written by LibreOffice (test/fixtures/xlsx/employees.xlsx, made by
// test/fixtures/xlsx/make-xlsx.sh from employees.csv beside it) loads by `compplan import
// FILE.xlsx --org --cycle` with its typed cells as they are — date cells as dates, number
// cells as their shortest decimal, boolean cells as true or false — and the employees the
// API serves are those of the same data loaded as JSON. On every database.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { runCli, stopAllProcesses } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const WORKBOOK = fileURLToPath(new URL('../fixtures/xlsx/employees.xlsx', import.meta.url));
const XLSX_CYCLE = 'mc_5e0c2a54-1d1b-4a5e-9b0e-0d7c5d2e6a11';
const JSON_CYCLE = 'mc_6f1d3b65-2e2c-4b6f-8c1f-1e8d6e3f7b22';

const column = (name: string, type: string, value: unknown) => ({ name, type, value });
const employee = (
  email: string,
  firstName: string,
  lastName: string,
  currencyCode: string,
  eligibilityStatus: 'eligible' | 'ineligible',
  [hire, pay, manager, ratio, city]: [string, string, boolean, string, string],
) => ({
  email,
  firstName,
  lastName,
  currencyCode,
  eligibilityStatus,
  columns: {
    hire: column('Hire Date', 'date', hire),
    pay: column('Base Pay', 'currency', { EUR: pay }),
    manager: column('Manager', 'boolean', manager),
    ratio: column('Compa-ratio', 'number', ratio),
    city: column('City', 'text', city),
  },
});
// The workbook's rows, as JSON: 85000 is a number cell (written 85000 in the CSV LibreOffice
// read), so its decimal is "85000"; 2024-02-29 a date cell.
const WORKBOOK_EMPLOYEES = [
  employee('ada@sheets.example', 'Ada', 'Lovelace', 'EUR', 'eligible', [
    '2020-03-15',
    '85000',
    true,
    '0.97',
    'Zürich',
  ]),
  employee('grace@sheets.example', 'Grace', 'Hopper', 'USD', 'ineligible', [
    '1999-12-31',
    '123456.78',
    false,
    '1.05',
    'Arlington',
  ]),
  employee('alan@sheets.example', 'Alan', 'Turing', 'GBP', 'eligible', [
    '2024-02-29',
    '0.1',
    true,
    '-0.5',
    'Manchester',
  ]),
];
// The cycle the workbook loads into: one employee gives its columns their types.
const FIRST = employee('first@sheets.example', 'First', 'Last', 'EUR', 'eligible', [
  '2019-01-01',
  '1.00',
  false,
  '1',
  'Bern',
]);
const cycle = (id: string, employees: unknown[]) => ({
  id,
  name: '2026 Merit',
  status: 'active' as const,
  startDate: '2026-01-01T00:00:00.000Z',
  endDate: '2026-03-31T00:00:00.000Z',
  currency: 'EUR',
  employees,
});
const FROM_XLSX = {
  organization: { slug: 'sheets', name: 'Sheets GmbH', apiKeysEnabled: true },
  meritCycles: [cycle(XLSX_CYCLE, [FIRST])],
} as DataSetInput;
const FROM_JSON = {
  organization: { slug: 'sheets-json', name: 'Sheets GmbH', apiKeysEnabled: true },
  meritCycles: [cycle(JSON_CYCLE, [FIRST, ...WORKBOOK_EMPLOYEES])],
} as DataSetInput;

describe('compplan import FILE.xlsx: a workbook written by LibreOffice', {
  timeout: 120_000,
}, () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [FROM_XLSX, FROM_JSON] });
  });
  afterAll(async () => {
    await stopAllProcesses();
    await server?.close();
  });

  /** The employees the API serves for a cycle, without their ids. */
  const served = async (org: string, cycleId: string) => {
    const key = await server.createKey(org);
    const response = await server.request(
      `/v1/compensationPlanning/meritCycles/${cycleId}/employees?limit=100`,
      { key },
    );
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Record<string, unknown>[] };
    return data.map(({ id: _id, ...rest }) => rest);
  };

  it('loads with its typed cells as they are: the same employees as the data as JSON', async () => {
    const env = { DATABASE_URL: server.databaseUrl };
    const args = ['import', WORKBOOK, '--org', 'sheets', '--cycle', XLSX_CYCLE];
    const result = await runCli(args, { env, timeoutMs: 30_000 });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'Imported sheets:',
        '  merit cycles: 0 created, 0 updated, 1 unchanged',
        '  employees:    3 created, 0 updated, 0 unchanged, 0 removed',
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(0);
    const fromJson = await served('sheets-json', JSON_CYCLE);
    expect(fromJson).toHaveLength(4);
    expect(await served('sheets', XLSX_CYCLE)).toEqual(fromJson);

    // Loaded again: nothing changes.
    const again = await runCli(args, { env, timeoutMs: 30_000 });
    expect(again.stdout).toContain('employees:    0 created, 0 updated, 3 unchanged, 0 removed');
  });
});
