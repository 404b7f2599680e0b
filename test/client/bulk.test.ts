// employees.bulk of @compplan/client against a real server: the employees as objects,
// exactly the list's, or flat (shape: 'flat'), or the bytes as a stream; NotFoundError for
// a cycle the key cannot see.
import { Readable } from 'node:stream';
import { CompplanClient, NotFoundError } from '@compplan/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { SDK_CYCLE, SDK_ORG, sdkDataSet } from './fixtures.js';

const EMPLOYEES = 250;

describe('client: employees.bulk', () => {
  let server: TestServer;
  let client: CompplanClient;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)] });
    client = new CompplanClient({ baseUrl: server.url, apiKey: await server.createKey(SDK_ORG) });
  });
  afterAll(() => server.close());

  it('iterates the employees as objects, exactly those the list serves, in its order', async () => {
    const download = client.employees.bulk(SDK_CYCLE.big);
    const employees = [];
    for await (const employee of download) employees.push(employee);
    expect(employees).toEqual(await client.employees.list(SDK_CYCLE.big, { limit: 100 }).toArray());
    expect(download.etag).toMatch(/^W\/"/);
  });

  it('iterates shape: flat as flat objects, named as the OData feed names its properties', async () => {
    const rows = [];
    for await (const row of client.employees.bulk(SDK_CYCLE.big, { shape: 'flat' })) rows.push(row);
    const listed = await client.employees.list(SDK_CYCLE.big, { limit: 100 }).toArray();
    expect(rows).toHaveLength(EMPLOYEES);
    const [first] = listed;
    if (!first) throw new Error('the list served no employee');
    const parts = first.columns.employee?.value as Record<string, string>;
    expect(rows[0]).toEqual({
      id: first.id,
      meritCycleId: SDK_CYCLE.big,
      email: first.email,
      firstName: first.firstName,
      lastName: first.lastName,
      preferredName: first.preferredName ?? null,
      currencyCode: first.currencyCode.code,
      currencyName: first.currencyCode.value,
      eligibilityStatus: first.eligibilityStatus,
      department: first.columns.department?.value,
      employee_fullName: parts.fullName,
      employee_jobLevel: parts.jobLevel,
      employee_jobTitle: parts.jobTitle,
    });
    expect(rows.map((row) => row.id)).toEqual(listed.map((employee) => employee.id));
  });

  it('streams the bytes of a CSV download, which Readable.fromWeb makes a Node stream: flat by default, the export’s layout with shape: nested', async () => {
    const textOf = async (shape?: 'nested') => {
      const stream = await client.employees
        .bulk(SDK_CYCLE.big, { format: 'csv', bom: false, ...(shape ? { shape } : {}) })
        .stream();
      let text = '';
      for await (const chunk of Readable.fromWeb(stream as never)) text += String(chunk);
      return text;
    };
    const flat = await textOf();
    expect(flat.startsWith('id,meritCycleId,email,firstName,')).toBe(true);
    expect(flat.trimEnd().split('\r\n').length).toBeGreaterThan(EMPLOYEES);
    const nested = await textOf('nested');
    expect(nested.startsWith('id,email,firstName,')).toBe(true);
    expect(nested.split('\r\n')[0]?.endsWith(',columns.other')).toBe(true);
  });

  it('refuses to iterate CSV as objects, and rejects a cycle it cannot see with NotFoundError', async () => {
    const csv = client.employees.bulk(SDK_CYCLE.big, { format: 'csv' });
    await expect(csv[Symbol.asyncIterator]().next()).rejects.toThrow(TypeError);
    const unknown = client.employees.bulk('mc_00000000-0000-4000-8000-000000000000');
    await expect(unknown.stream()).rejects.toThrow(NotFoundError);
  });
});
