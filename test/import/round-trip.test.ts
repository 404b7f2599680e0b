// Export, then import again (docs/export.md, docs/import-format.md): a merit cycle with a
// column of every type — nulls, empty text, decimals as written, a currency part — exported
// as CSV, NDJSON or JSON by the export (`compplan export employees`) and loaded back
// unchanged by the import (`compplan import`) reports every employee unchanged, writes
// nothing and tells delta readers and webhooks nothing; a typed value changed in the file
// is a change like any other. On the suite's database.
import { PassThrough } from 'node:stream';
import { createClient } from '@compplan/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportFormat } from '../../src/export/export.js';
import { runExport } from '../../src/export/export.js';
import { importEmployeesCsv } from '../../src/import/cycle-csv.js';
import { importRecords } from '../../src/import/load.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { recordsOfStream } from '../../src/import/source.js';
import { addWebhookEndpoint } from '../../src/webhooks/service.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dumpTables } from '../helpers/snapshot.js';

const ORG = 'roundtrip';
const CYCLE_ID = 'mc_71000000-0000-4000-8000-000000000001';
const ADA = 'mce_71000000-0000-4000-8000-000000000001';

type Cycle = Omit<DataSetInput['meritCycles'][number], 'employees'>;
const CYCLE: Cycle = {
  id: CYCLE_ID,
  name: '2026 Annual Merit',
  status: 'active',
  startDate: '2026-01-05T00:00:00.000Z',
  endDate: '2026-03-31T23:59:59.999Z',
  createdDate: '2025-11-14T09:30:00.000Z',
  currency: 'EUR',
  exchangeRates: { USD: 1.08 },
};
const ORGANIZATION = { slug: ORG, name: 'Round Trip', apiKeysEnabled: true };

function dataSet(): DataSetInput {
  const person = (n: number, first: string, columns: Record<string, unknown>) => ({
    id: `mce_71000000-0000-4000-8000-00000000000${n}`,
    email: `${first.toLowerCase()}@roundtrip.example`,
    firstName: first,
    lastName: 'Trip',
    preferredName: n === 2 ? '' : null,
    currencyCode: n === 3 ? { code: 'GBP', value: 'Pound, as payroll says' } : 'GBP',
    eligibilityStatus: 'eligible' as const,
    columns,
  });
  const columns = (values: {
    basePay: unknown;
    ratio: unknown;
    department: unknown;
    hired: unknown;
    manager: unknown;
    employee: unknown;
    notes: unknown;
  }) => ({
    basePay: { name: 'Base pay', type: 'currency', value: values.basePay },
    currentCompaRatio: { name: 'Compa-ratio', type: 'number', value: values.ratio },
    department: { name: 'Department', type: 'text', value: values.department },
    hireDate: { name: 'Hire date', type: 'date', value: values.hired },
    isManager: { name: 'Manager?', type: 'boolean', value: values.manager },
    employee: { name: 'Employee', type: 'composite', value: values.employee },
    notes: { name: 'Notes', type: 'note', value: values.notes },
  });
  return {
    organization: ORGANIZATION,
    meritCycles: [
      {
        ...CYCLE,
        employees: [
          person(
            1,
            'Ada',
            columns({
              basePay: { EUR: '120000.00' },
              ratio: '0.9700',
              department: 'Engineering, Platform',
              hired: '2019-04-01',
              manager: true,
              employee: { fullName: 'Ada Trip', jobLevel: 'L5', bonus: { EUR: '9000.50' } },
              notes: { tags: ['a', 1, null], said: '"quoted"' },
            }),
          ),
          person(
            2,
            'Ben',
            columns({
              basePay: null,
              ratio: null,
              department: '',
              hired: null,
              manager: false,
              employee: null,
              notes: 'a plain string',
            }),
          ),
          person(
            3,
            'Cy',
            columns({
              basePay: { EUR: 95000 },
              ratio: 1.05,
              department: ' leading space',
              hired: '2024-02-29',
              manager: null,
              employee: { fullName: 'Cy Trip', jobLevel: '', bonus: { EUR: '0' } },
              notes: null,
            }),
          ),
        ],
      },
    ],
  };
}

describe('export, then import the file again', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [dataSet()] });
    key = await server.createKey(ORG);
    // An endpoint that listens: an import then records its events (the outbox); nothing
    // is sent, as this server runs no dispatcher.
    await addWebhookEndpoint(server.database.db, {
      org: ORG,
      url: 'http://127.0.0.1:9/hook',
      allowPrivateNetworks: ['127.0.0.0/8'],
    });
  });
  afterAll(() => server.close());

  async function exported(format: ExportFormat): Promise<string> {
    const client = createClient({ baseUrl: server.url, apiKey: key, pacing: false });
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    await runExport(
      client,
      { kind: 'employees', format, cycle: CYCLE_ID, pageSize: 2, bom: true },
      { stream },
    );
    return Buffer.concat(chunks).toString('utf8');
  }

  /** The employees of an NDJSON or JSON export as a data set of the cycle. */
  function dataSetText(format: 'ndjson' | 'json', text: string): string {
    const employees: unknown[] =
      format === 'json'
        ? (JSON.parse(text) as unknown[])
        : text
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as unknown);
    if (format === 'json') {
      return JSON.stringify({ organization: ORGANIZATION, meritCycles: [{ ...CYCLE, employees }] });
    }
    return [
      JSON.stringify({ organization: ORGANIZATION }),
      JSON.stringify({ meritCycle: CYCLE }),
      ...employees.map((employee) => JSON.stringify({ employee, meritCycle: CYCLE_ID })),
    ].join('\n');
  }

  async function load(format: ExportFormat, text: string) {
    if (format === 'csv') {
      return importEmployeesCsv(server.database, text, {
        org: ORG,
        cycle: CYCLE_ID,
        prune: false,
        changeRetentionDays: 30,
      });
    }
    const chunks = async function* () {
      yield Buffer.from(dataSetText(format, text));
    };
    return importRecords(server.database, await recordsOfStream(`data.${format}`, chunks()));
  }

  /** The deltaToken at the end of a full walk of the cycle's employees. */
  async function deltaToken(): Promise<string> {
    let path = `${employeesPath(CYCLE_ID)}/delta?limit=100`;
    for (;;) {
      const page = (await (await server.request(path, { key })).json()) as {
        nextCursor: string | null;
        deltaToken: string | null;
      };
      if (page.deltaToken) return page.deltaToken;
      path = `${employeesPath(CYCLE_ID)}/delta?limit=100&nextCursor=${page.nextCursor}`;
    }
  }

  async function changesSince(token: string): Promise<{ id: string; columns: unknown }[]> {
    const response = await server.request(`${employeesPath(CYCLE_ID)}/delta?deltaToken=${token}`, {
      key,
    });
    return ((await response.json()) as { data: { id: string; columns: unknown }[] }).data;
  }

  const employeeEvents = async () =>
    (
      await server.database.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('type', '=', 'meritCycle.employees.changed')
        .execute()
    ).map((row) => JSON.parse(row.payload) as unknown);

  it('the CSV header holds every column of the cycle from its schema, one a composite part', async () => {
    const header = (await exported('csv')).split('\r\n')[0];
    expect(header).toBe(
      '\uFEFFid,email,firstName,lastName,preferredName,currencyCode.code,currencyCode.value,eligibilityStatus,columns.basePay,columns.currentCompaRatio,columns.department,columns.employee.bonus,columns.employee.fullName,columns.employee.jobLevel,columns.hireDate,columns.isManager,columns.notes,columns.other',
    );
  });

  for (const format of ['csv', 'ndjson', 'json'] as const) {
    it(`${format}: every type exported and imported again is unchanged; no row is written, no delta item or webhook event made`, async () => {
      const token = await deltaToken();
      const before = await dumpTables(server.database.db);
      const events = await employeeEvents();
      const text = await exported(format);
      expect((await load(format, text)).employees).toEqual({
        created: 0,
        updated: 0,
        unchanged: 3,
        removed: 0,
      });
      const after = await dumpTables(server.database.db);
      expect(after.merit_cycle_employees).toEqual(before.merit_cycle_employees);
      expect(after.merit_cycle_columns).toEqual(before.merit_cycle_columns);
      expect(await changesSince(token)).toEqual([]);
      expect(await employeeEvents()).toEqual(events);
    });
  }

  it('a typed value changed in the exported CSV is one updated employee: served, in the next delta and in a webhook event', async () => {
    const token = await deltaToken();
    const events = (await employeeEvents()).length;
    const text = await exported('csv');
    expect(text).toContain(',120000.00,0.9700,');
    const summary = await load('csv', text.replace(',120000.00,0.9700,', ',125000.00,0.9700,'));
    expect(summary.employees).toEqual({ created: 0, updated: 1, unchanged: 2, removed: 0 });
    const changes = await changesSince(token);
    expect(changes.map((employee) => employee.id)).toEqual([ADA]);
    expect(changes[0]?.columns).toMatchObject({
      basePay: { name: 'Base pay', type: 'currency', value: { EUR: '125000.00' } },
    });
    const recorded = await employeeEvents();
    expect(recorded).toHaveLength(events + 1);
    expect(recorded.at(-1)).toEqual({
      meritCycleId: CYCLE_ID,
      created: 0,
      updated: 1,
      removed: 0,
    });
  });
});
