// How imported values come back out of the API (docs/api-behaviour.md, docs/import-format.md): dates in
// UTC with milliseconds, currency names, exchange rates and open column types, exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CYCLES = '/v1/compensationPlanning/meritCycles';
const ODD = 'mc_50000000-0000-4000-8000-000000000001';

/** Open column types with every kind of JSON value. */
const OPEN_COLUMNS = {
  nothing: { name: 'Nothing', type: 'note', value: null },
  zero: { name: 'Zero', type: 'amount', value: 0 },
  negative: { name: 'Negative', type: 'amount', value: -12.375 },
  big: { name: 'Big', type: 'amount', value: 1e21 },
  yes: { name: 'Yes', type: 'flag', value: true },
  list: { name: 'List', type: 'list', value: [1, 'two', null, false, [3], { four: 4 }] },
  nested: {
    name: 'Nested',
    type: 'json',
    value: { a: { b: [1, { c: null, d: 'ü – 😀' }] }, empty: {}, none: [] },
  },
  emptyText: { name: 'Empty text', type: 'text', value: '' },
  'key with spaces/and.dots': { name: 'Odd key', type: 'text', value: 'kept' },
  composite: {
    name: 'Composite',
    type: 'composite',
    value: { fullName: 'Odd Person', extraPart: 'any name' },
  },
};

function oddDataSet(): DataSetInput {
  const dataSet = acmeDataSet();
  dataSet.meritCycles.push({
    id: ODD,
    name: 'Odd values',
    status: 'inactive',
    // No milliseconds, an offset with minutes, fractional seconds beyond milliseconds.
    startDate: '2026-06-01T12:00:00Z',
    endDate: '2026-06-30T23:59:59+05:30',
    createdDate: '2026-05-01T00:00:00.5-01:00',
    currency: 'JPY',
    exchangeRates: { USD: 0.0067, EUR: 0.0061234567891 },
    employees: [
      {
        id: 'mce_50000000-0000-4000-8000-000000000001',
        email: 'odd@acme.example',
        firstName: 'Odd',
        lastName: 'Person',
        currencyCode: { code: 'JPY' },
        eligibilityStatus: 'eligible',
        columns: OPEN_COLUMNS,
      },
      {
        id: 'mce_50000000-0000-4000-8000-000000000002',
        email: 'even@acme.example',
        firstName: 'Even',
        lastName: 'Person',
        currencyCode: 'CHF',
        eligibilityStatus: 'ineligible',
        columns: {},
      },
    ],
  });
  return dataSet;
}

describe('imported values as the API serves them', () => {
  let server: TestServer;
  let key: string;
  const get = async (path: string) => {
    const response = await server.request(path, { key });
    expect(response.status).toBe(200);
    return response;
  };
  const employeesOf = async (id: string) =>
    (
      (await (await get(`${CYCLES}/${id}/employees?limit=100`)).json()) as {
        data: { id: string; currencyCode: unknown; columns: unknown }[];
      }
    ).data;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [oddDataSet()] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  it('serves dates given with any offset or precision as UTC with milliseconds', async () => {
    expect(await (await get(`${CYCLES}/${CYCLE.offset}`)).json()).toMatchObject({
      startDate: '2025-01-02T02:00:00.000Z',
      endDate: '2025-02-01T00:00:00.000Z',
      createdDate: '2024-10-01T00:00:00.000Z',
    });
    expect(await (await get(`${CYCLES}/${ODD}`)).json()).toEqual({
      id: ODD,
      name: 'Odd values',
      startDate: '2026-06-01T12:00:00.000Z',
      endDate: '2026-06-30T18:29:59.000Z',
      createdDate: '2026-05-01T01:00:00.500Z',
      status: 'inactive',
    });
  });

  it('names a currency given only by its code in English (EUR → Euro), and keeps a name the data gave', async () => {
    const annual = await employeesOf(CYCLE.annual2025);
    const byId = Object.fromEntries(annual.map((e) => [e.id, e.currencyCode]));
    expect(byId).toEqual({
      'mce_10000000-0000-4000-8000-00000000a001': { code: 'GBP', value: 'British Pound' },
      'mce_10000000-0000-4000-8000-00000000a002': { code: 'USD', value: 'US Dollar (payroll)' },
      'mce_10000000-0000-4000-8000-00000000a003': { code: 'EUR', value: 'Euro' },
    });
    const odd = await employeesOf(ODD);
    expect(odd.map((e) => e.currencyCode)).toEqual([
      { code: 'CHF', value: 'Swiss Franc' },
      { code: 'JPY', value: 'Japanese Yen' },
    ]);
  });

  it('serves exchange rates exactly as loaded, relative to the cycle currency', async () => {
    const response = await get(`${CYCLES}/${CYCLE.annual2025}/exchangeRates`);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ base: 'USD', rates: { EUR: 0.92, GBP: 0.79, JPY: 151.3 } });
    expect(text).toContain('0.92');
    expect(await (await get(`${CYCLES}/${ODD}/exchangeRates`)).json()).toEqual({
      base: 'JPY',
      rates: { USD: 0.0067, EUR: 0.0061234567891 },
    });
  });

  it('serves columns of any type back exactly as loaded: null, numbers, booleans, arrays, nested objects', async () => {
    const [even, odd] = await employeesOf(ODD);
    expect(even?.columns).toEqual({});
    expect(odd?.columns).toStrictEqual(OPEN_COLUMNS);
    const grace = (await employeesOf(CYCLE.annual2025)).find(
      (e) => e.id === 'mce_10000000-0000-4000-8000-00000000a002',
    );
    const fixture = acmeDataSet().meritCycles[0]?.employees?.[1];
    expect(grace?.columns).toStrictEqual(fixture?.columns);
  });
});
