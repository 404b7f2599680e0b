// The bulk download's nested CSV (docs/bulk-download.md, "Conversions in a worker
// thread"), made in a worker thread while the next chunk is read: a cycle of several
// chunks is, byte for byte, the export's CSV of
// the employees the list serves, in list order; a conversion that fails (a stored text
// that is not JSON) ends the response at once, and the next download is served. Runs on
// every database.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  columnsHeader,
  csvRow,
  EMPLOYEE_COLUMNS,
  employeeRowWriter,
  OTHER_COLUMNS,
} from '../../src/export/csv.js';
import type { Employee } from '../../src/modules/employees/schema.js';
import { parseCsv } from '../export/csv-parse.js';
import { ACME, acmeDataSet, CYCLE, LARGE_CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import { columnsPath, employeesPath } from '../helpers/api-expectations.js';
import { pausedDownload } from '../helpers/paused-download.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Three chunks: 200 employees, then as many as fit in about 1 MiB (at most 2,000), then
// the rest; the worker converts one while the next is read.
const EMPLOYEES = 2_500;

// The export's layout (`shape=nested`): what `compplan export` writes.
const bulkCsv = (cycle: string) => `${employeesPath(cycle)}/bulk?format=csv&shape=nested`;

/** The body as UTF-8 with its byte order mark (Response.text() would drop it). */
const textOf = async (response: Response) =>
  Buffer.from(await response.arrayBuffer()).toString('utf8');

/** The list's employees of a cycle, page by page, in its order. */
async function listEmployees(server: TestServer, key: string, cycle: string) {
  const employees: Employee[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : '';
    const response = await server.request(`${employeesPath(cycle)}?limit=100${query}`, { key });
    const page = (await response.json()) as { data: Employee[]; nextCursor: string | null };
    employees.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return employees;
}

/** What `compplan export employees` writes for them: BOM, header, a row an employee. */
async function exportCsv(server: TestServer, key: string, cycle: string): Promise<string> {
  const columns = (await (await server.request(columnsPath(cycle), { key })).json()) as {
    data: Parameters<typeof columnsHeader>[0];
  };
  const header = [...EMPLOYEE_COLUMNS, ...columnsHeader(columns.data), OTHER_COLUMNS];
  const rowOf = employeeRowWriter(header);
  const employees = await listEmployees(server, key, cycle);
  return `\uFEFF${csvRow(header)}${employees.map(rowOf).join('')}`;
}

describe('the bulk download’s CSV', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), largeCycleDataSet(EMPLOYEES)] });
    key = await server.createKey(ACME);
  }, 120_000);
  afterAll(() => server?.close());

  it('is, across chunks, byte for byte the export’s CSV of the employees the list serves, in list order', async () => {
    const response = await server.request(bulkCsv(LARGE_CYCLE), { key });
    expect(response.status).toBe(200);
    const text = await textOf(response);
    const expected = await exportCsv(server, key, LARGE_CYCLE);
    expect(text).toBe(expected);
    const [, ...rows] = parseCsv(text.slice(1));
    expect(rows.map((row) => row[0])).toEqual(
      (await listEmployees(server, key, LARGE_CYCLE)).map((employee) => employee.id),
    );
    expect(rows).toHaveLength(EMPLOYEES);
  });
});

describe('the bulk download’s CSV when a conversion fails', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), largeCycleDataSet(EMPLOYEES)] });
    key = await server.createKey(ACME);
    // The cycle's last employee in list order (its last chunk) stored as text that is not
    // JSON: the first chunks are sent before its conversion fails.
    const employees = await listEmployees(server, key, LARGE_CYCLE);
    const last = employees.at(-1)?.id ?? '';
    await sql`update merit_cycle_employees set body = ${'{"id": "cut'} where id = ${last}`.execute(
      server.database.db,
    );
  }, 120_000);
  afterAll(() => server?.close());

  it('ends the response at once, without its last chunk, logs why, and serves the next download', async () => {
    const download = await pausedDownload(`${server.url}${bulkCsv(LARGE_CYCLE)}`, {
      'x-api-key': key,
    });
    expect(await download.rest()).toHaveProperty('error');
    expect(server.logs).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'bulk download failed',
        err: expect.objectContaining({ message: expect.stringContaining('CSV conversion failed') }),
      }),
    );
    // The key's download slot is free again, and the worker converts the next download.
    const next = await server.request(bulkCsv(CYCLE.annual2025), { key });
    expect(next.status).toBe(200);
    expect(await textOf(next)).toBe(await exportCsv(server, key, CYCLE.annual2025));
  });
});
