// GET /v1/compensationPlanning/meritCycles/{id}/columns (docs/api-behaviour.md, "Column
// schema"): a merit cycle's columns as the import keeps them, under every rule of the other
// endpoints — key, 404 for what the key cannot read, 422 for any query parameter, HEAD,
// ETag — and kept up to date by each import. The scope and isolation rules are in the
// isolation matrices (test/api/*isolation-matrix.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, ADA_ID, acmeDataSet, CYCLE, globexDataSet } from '../fixtures/data-sets.js';
import { columnsPath, errorBody, JSON_TYPE } from '../helpers/api-expectations.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const text = (key: string, name: string) => ({ key, name, type: 'text', parts: null });

/** The 2025 annual cycle of the Acme fixture: five columns over three employees. */
const ANNUAL_2025 = [
  text('department', 'Department'),
  {
    key: 'employee',
    name: 'Employee',
    type: 'composite',
    parts: [
      { key: 'fullName', type: 'text' },
      { key: 'jobLevel', type: 'text' },
      { key: 'jobTitle', type: 'text' },
    ],
  },
  { key: 'notes', name: 'Notes', type: 'note', parts: null },
  { key: 'tags', name: 'Tags', type: 'list', parts: null },
  { key: 'tenure', name: 'Tenure (years)', type: 'number', parts: null },
];

describe('GET /meritCycles/{id}/columns', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), globexDataSet()] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  async function get(path: string, headers: Record<string, string> = {}) {
    const response = await server.request(path, { key, headers });
    return { status: response.status, response, body: (await response.json()) as unknown };
  }

  it('serves every column of the cycle with its name and type, ordered by key; a composite column with the parts seen; nextCursor null', async () => {
    const { status, response, body } = await get(columnsPath(CYCLE.annual2025));
    expect(status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(body).toEqual({ data: ANNUAL_2025, nextCursor: null });
  });

  it('serves an empty list for a cycle loaded without employees', async () => {
    expect((await get(columnsPath(CYCLE.offset))).body).toEqual({ data: [], nextCursor: null });
  });

  it('answers HEAD like GET, without a body', async () => {
    const head = await nodeRequest(server.url, columnsPath(CYCLE.annual2025), {
      method: 'HEAD',
      headers: { 'x-api-key': key },
    });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe(JSON_TYPE);
  });

  it('answers 401 without a key, 404 for another organisation’s cycle, an employee id or a malformed id', async () => {
    const anonymous = await server.request(columnsPath(CYCLE.annual2025), { key: null });
    expect(anonymous.status).toBe(401);
    for (const id of [CYCLE.globex, ADA_ID, 'mc_nope', 'mc_00000000-0000-4000-8000-000000000000']) {
      expect(await get(columnsPath(id)), id).toMatchObject({
        status: 404,
        body: errorBody(columnsPath(id), 'Merit cycle not found', 404),
      });
    }
  });

  it('answers 422 unrecognized_keys for any query parameter (it has none)', async () => {
    const { status, body } = await get(`${columnsPath(CYCLE.annual2025)}?limit=5`);
    expect(status).toBe(422);
    expect(body).toMatchObject({
      validationErrors: [
        { path: 'limit', message: 'Unrecognized parameter "limit"', code: 'unrecognized_keys' },
      ],
    });
  });

  it('carries an ETag (If-None-Match → 304) and the rate-limit headers; an import that adds a column changes both answer and tag', async () => {
    const first = await get(columnsPath(CYCLE.annual2025));
    const etag = first.response.headers.get('etag') ?? '';
    expect(etag).toMatch(/^W\/"/);
    expect(first.response.headers.get('ratelimit-policy')).toBe('"default";q=1000000;w=1');
    const again = await server.request(columnsPath(CYCLE.annual2025), {
      key,
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);

    const dataSet = acmeDataSet();
    const ada = dataSet.meritCycles[0]?.employees?.[0];
    if (!ada) throw new Error('fixture lost Ada');
    ada.columns = {
      ...(ada.columns as object),
      basePay: { name: 'Base pay', type: 'currency', value: { USD: 120000.5 } },
    };
    await server.load(dataSet);
    const after = await get(columnsPath(CYCLE.annual2025), { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.response.headers.get('etag')).not.toBe(etag);
    expect((after.body as { data: unknown[] }).data).toEqual([
      { key: 'basePay', name: 'Base pay', type: 'currency', parts: null },
      ...ANNUAL_2025,
    ]);
  });
});
