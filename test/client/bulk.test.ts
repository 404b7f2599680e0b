// employees.bulk of @compplan/client against a real server: the employees as objects,
// exactly the list's, or the bytes as a stream; NotFoundError for a cycle the key cannot
// see.
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

  it('streams the bytes of a CSV download, which Readable.fromWeb makes a Node stream', async () => {
    const stream = await client.employees
      .bulk(SDK_CYCLE.big, { format: 'csv', bom: false })
      .stream();
    let text = '';
    for await (const chunk of Readable.fromWeb(stream as never)) text += String(chunk);
    expect(text.startsWith('id,email,firstName,')).toBe(true);
    expect(text.trimEnd().split('\r\n').length).toBeGreaterThan(EMPLOYEES);
  });

  it('refuses to iterate CSV as objects, and rejects a cycle it cannot see with NotFoundError', async () => {
    const csv = client.employees.bulk(SDK_CYCLE.big, { format: 'csv' });
    await expect(csv[Symbol.asyncIterator]().next()).rejects.toThrow(TypeError);
    const unknown = client.employees.bulk('mc_00000000-0000-4000-8000-000000000000');
    await expect(unknown.stream()).rejects.toThrow(NotFoundError);
  });
});
