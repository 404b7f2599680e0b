// GET /v1/compensationPlanning/meritCycles/{meritCycleId}/employees over real HTTP: exact
// employee objects (docs/api-behaviour.md, docs/import-format.md), the documented code-point order,
// 404s for cycles that are not the caller's, and limit validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EDGE_CYCLE,
  edgeEmployees,
  JPY_EMPLOYEE_ID,
  PROTO_CYCLE,
  UMBRELLA,
  umbrellaDataSet,
} from '../fixtures/api-data-sets.js';
import {
  ACME,
  ADA_ID,
  acmeDataSet,
  CYCLE,
  globexDataSet,
  LARGE_CYCLE,
  largeCycleDataSet,
  orderingEmployees,
} from '../fixtures/data-sets.js';
import {
  compareEmployees,
  employeesPath,
  errorBody,
  expectedEmployee,
  JSON_TYPE,
  type Page,
  type ValidationItem,
} from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Employee {
  id: string;
  firstName: string;
  lastName: string;
  columns: Record<string, unknown>;
}

const GRACE = {
  id: 'mce_10000000-0000-4000-8000-00000000a002',
  email: 'grace@acme.example',
  firstName: 'Grace',
  lastName: 'Hopper',
  preferredName: 'Amazing Grace',
  // Loaded in the object form: its value is served as loaded.
  currencyCode: { code: 'USD', value: 'US Dollar (payroll)' },
  eligibilityStatus: 'ineligible',
  columns: {
    department: { name: 'Department', type: 'text', value: 'Research' },
    employee: {
      name: 'Employee',
      type: 'composite',
      value: { fullName: 'Grace Hopper', jobLevel: 'L7', jobTitle: 'Distinguished Engineer' },
    },
    tenure: { name: 'Tenure (years)', type: 'number', value: '12.5' },
    tags: { name: 'Tags', type: 'list', value: ['navy', 'cobol', null, { nested: [1, 2] }] },
    notes: { name: 'Notes', type: 'note', value: null },
  },
};

const ADA = {
  id: ADA_ID,
  email: 'ada@acme.example',
  firstName: 'Ada',
  lastName: 'Lovelace',
  preferredName: null,
  // Loaded as the code "GBP" only: the English name comes from Intl.
  currencyCode: { code: 'GBP', value: 'British Pound' },
  eligibilityStatus: 'eligible',
  columns: {
    department: { name: 'Department', type: 'text', value: 'Engineering' },
    employee: {
      name: 'Employee',
      type: 'composite',
      value: { fullName: 'Ada Lovelace', jobLevel: 'L5', jobTitle: 'Staff Engineer' },
    },
  },
};

const ALAN = {
  id: 'mce_10000000-0000-4000-8000-00000000a003',
  // Served with the case it was loaded with.
  email: 'Alan.Turing@Acme.example',
  firstName: 'Alan',
  lastName: 'Turing',
  // Loaded without preferredName.
  preferredName: null,
  currencyCode: { code: 'EUR', value: 'Euro' },
  eligibilityStatus: 'eligible',
  columns: {
    department: { name: 'Department', type: 'text', value: 'Research' },
    employee: {
      name: 'Employee',
      type: 'composite',
      value: { fullName: 'Alan Turing', jobLevel: 'L6', jobTitle: 'Principal Scientist' },
    },
  },
};

function invalidQuery(path: string, items: ValidationItem[]) {
  const summary = items.map((item) => `${item.path}: ${item.message}`).join('; ');
  return errorBody(path, `Invalid query parameters: ${summary}`, 422, items);
}

describe('GET /meritCycles/{meritCycleId}/employees', () => {
  let server: TestServer;
  let acme: string;
  let umbrella: string;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [acmeDataSet(), globexDataSet(), largeCycleDataSet(30), umbrellaDataSet()],
    });
    acme = await server.createKey(ACME);
    umbrella = await server.createKey(UMBRELLA);
  });
  afterAll(() => server.close());

  async function get(path: string, key = acme) {
    const response = await server.request(path, { key });
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    return { status: response.status, body: (await response.json()) as unknown };
  }

  async function page(path: string, key = acme) {
    const { status, body } = await get(path, key);
    expect(status, JSON.stringify(body)).toBe(200);
    return body as Page<Employee>;
  }

  describe('employee objects', () => {
    it('serves each employee exactly as the spec shapes it, ordered by lastName', async () => {
      expect(await get(employeesPath(CYCLE.annual2025))).toEqual({
        status: 200,
        body: { data: [GRACE, ADA, ALAN], nextCursor: null },
      });
    });

    it('names a code-only currency with the English name from Intl', async () => {
      const names = new Intl.DisplayNames(['en'], { type: 'currency' });
      const { data } = await page(employeesPath(CYCLE.annual2025));
      const ada = data.find((employee) => employee.id === ADA_ID) as unknown as typeof ADA;
      expect(ada.currencyCode).toEqual({ code: 'GBP', value: names.of('GBP') });
      expect(ada.currencyCode).toEqual({ code: 'GBP', value: 'British Pound' });
    });

    it('names a currency loaded as {code} without value from Intl, and keeps a given value', async () => {
      const { data } = await page(employeesPath(EDGE_CYCLE), umbrella);
      const currencies = Object.fromEntries(
        data.map((employee) => [
          employee.id,
          (employee as unknown as { currencyCode: unknown }).currencyCode,
        ]),
      );
      expect(currencies[JPY_EMPLOYEE_ID]).toEqual({ code: 'JPY', value: 'Japanese Yen' });
      expect(currencies['mce_50000000-0000-4000-8000-000000000010']).toEqual({
        code: 'CHF',
        value: 'Swiss Franc',
      });
      expect(currencies['mce_50000000-0000-4000-8000-000000000011']).toEqual({
        code: 'SEK',
        value: 'Swedish Krona',
      });
    });

    it('serves columns of any type and value (numbers, booleans, null, empty and nested structures, odd keys and text) exactly as loaded', async () => {
      const { data } = await page(employeesPath(EDGE_CYCLE), umbrella);
      const gus = data.find((employee) => employee.id === JPY_EMPLOYEE_ID);
      const loaded = edgeEmployees().find((employee) => employee.id === JPY_EMPLOYEE_ID);
      if (!loaded) throw new Error('fixture lost its JPY employee');
      expect(gus).toEqual(expectedEmployee(loaded));
      expect(gus).toEqual(
        expect.objectContaining({
          preferredName: '',
          eligibilityStatus: 'ineligible',
          columns: expect.objectContaining({
            score: { name: 'Score', type: 'number', value: '0.1' },
            tiny: { name: 'Tiny', type: 'number', value: '0.0000001' },
            flag: { name: 'Flag', type: 'boolean', value: false },
            nothing: { name: 'Nothing', type: 'note', value: null },
            emptyList: { name: 'Empty list', type: 'list', value: [] },
            emptyObject: { name: 'Empty object', type: 'object', value: {} },
            constructor: { name: 'Constructor', type: 'label', value: 'not a function' },
          }),
        }),
      );
    });

    it('serves every edge employee exactly (preferredName null or string)', async () => {
      const expected = edgeEmployees().map(expectedEmployee).sort(compareEmployees);
      expect(await get(employeesPath(EDGE_CYCLE), umbrella)).toEqual({
        status: 200,
        body: { data: expected, nextCursor: null },
      });
    });

    it('keeps a column key, and a key inside a column value, named __proto__', async () => {
      const response = await server.request(employeesPath(PROTO_CYCLE), { key: umbrella });
      expect(response.status).toBe(200);
      // JSON.parse keeps "__proto__" as an own key, as an imported file has it.
      const body = JSON.parse(await response.text()) as Page<Employee>;
      const columns = body.data[0]?.columns ?? {};
      expect(Object.keys(columns).sort()).toEqual(['__proto__', 'nested']);
      expect(JSON.stringify(columns)).toBe(
        '{"__proto__":{"name":"Proto","type":"label","value":"kept"},"nested":{"name":"Nested","type":"object","value":{"__proto__":{"x":1},"y":2}}}',
      );
    });

    it('answers an empty page for a cycle without employees', async () => {
      expect(await get(employeesPath(CYCLE.offset))).toEqual({
        status: 200,
        body: { data: [], nextCursor: null },
      });
    });
  });

  describe('order: lastName, firstName, id by code point', () => {
    it('orders the ordering fixture (case, accents, ties on both names) by code point', async () => {
      const expected = orderingEmployees().map(expectedEmployee).sort(compareEmployees);
      expect(await get(employeesPath(CYCLE.midYear))).toEqual({
        status: 200,
        body: { data: expected, nextCursor: null },
      });
    });

    it('orders by code point, not by UTF-16 code unit, past the BMP', async () => {
      const employees = edgeEmployees();
      const byCodePoint = [...employees].sort(compareEmployees).map((employee) => employee.id);
      // JavaScript's < compares UTF-16 code units: the order the API must not use.
      const codeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
      const byCodeUnit = [...employees]
        .sort(
          (a, b) =>
            codeUnits(a.lastName, b.lastName) ||
            codeUnits(a.firstName, b.firstName) ||
            codeUnits(a.id ?? '', b.id ?? ''),
        )
        .map((employee) => employee.id);
      // The fixture only proves something if the two orders differ.
      expect(byCodeUnit).not.toEqual(byCodePoint);
      const { data } = await page(employeesPath(EDGE_CYCLE), umbrella);
      expect(data.map((employee) => employee.id)).toEqual(byCodePoint);
    });

    it('walks the edge cycle one employee a page: the pages join to its one full page', async () => {
      const full = await page(`${employeesPath(EDGE_CYCLE)}?limit=100`, umbrella);
      const walked: Employee[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `&nextCursor=${cursor}` : '';
        const body = await page(`${employeesPath(EDGE_CYCLE)}?limit=1${query}`, umbrella);
        walked.push(...body.data);
        cursor = body.nextCursor;
      } while (cursor !== null && walked.length <= full.data.length);
      expect(full.data).toHaveLength(edgeEmployees().length);
      expect(walked).toEqual(full.data);
    });

    it('keeps the order across pages of 3', async () => {
      const expected = orderingEmployees()
        .sort(compareEmployees)
        .map((employee) => employee.id);
      const ids: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `&nextCursor=${cursor}` : '';
        const body = await page(`${employeesPath(CYCLE.midYear)}?limit=3${query}`);
        expect(body.data.length).toBe(pages < 2 ? 3 : 2);
        ids.push(...body.data.map((employee) => employee.id));
        cursor = body.nextCursor;
        pages++;
      } while (cursor !== null && pages < 10);
      expect(pages).toBe(3);
      expect(ids).toEqual(expected);
    });
  });

  describe('limit', () => {
    it('returns 25 employees by default, the first 25 in order, with a nextCursor', async () => {
      const expected = (largeCycleDataSet(30).meritCycles[0]?.employees ?? [])
        .map(expectedEmployee)
        .sort(compareEmployees);
      const first = await page(employeesPath(LARGE_CYCLE));
      expect(first.data).toEqual(expected.slice(0, 25));
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await page(`${employeesPath(LARGE_CYCLE)}?nextCursor=${first.nextCursor}`);
      expect(second).toEqual({ data: expected.slice(25), nextCursor: null });
    });

    it('honours limit=1 and limit=100', async () => {
      const one = await page(`${employeesPath(CYCLE.annual2025)}?limit=1`);
      expect(one.data).toEqual([GRACE]);
      expect(one.nextCursor).toEqual(expect.any(String));
      const all = await page(`${employeesPath(LARGE_CYCLE)}?limit=100`);
      expect(all.data.length).toBe(30);
      expect(all.nextCursor).toBeNull();
    });

    const tooSmall = { path: 'limit', message: 'must be at least 1', code: 'too_small' };
    const tooBig = { path: 'limit', message: 'must be at most 100', code: 'too_big' };
    const notInteger = { path: 'limit', message: 'must be a whole number', code: 'invalid_type' };

    it.each([
      ['limit=0', [tooSmall]],
      ['limit=101', [tooBig]],
      ['limit=abc', [notInteger]],
      ['limit=2.5', [notInteger]],
      ['limit=5&limit=5', [notInteger]],
      [
        'status=active',
        [{ path: 'status', message: 'Unrecognized parameter "status"', code: 'unrecognized_keys' }],
      ],
      [
        'gte=2025-01-01',
        [{ path: 'gte', message: 'Unrecognized parameter "gte"', code: 'unrecognized_keys' }],
      ],
    ])('%s → 422 with exact validationErrors', async (query, items) => {
      const path = employeesPath(CYCLE.annual2025);
      expect(await get(`${path}?${query}`)).toEqual({
        status: 422,
        body: invalidQuery(path, items),
      });
    });
  });

  describe('cycles that are not the caller’s', () => {
    it.each([
      ['an unknown cycle id', 'mc_10000000-0000-4000-8000-000000000099'],
      ['another organisation’s cycle', CYCLE.globex],
      ['a wrong-shape id', 'not-a-cycle'],
      ['an upper-case id', CYCLE.annual2025.toUpperCase()],
      ['an employee id', ADA_ID],
      ['a cycle id with a suffix', `${CYCLE.annual2025}0`],
    ])('answers 404 with the standard body for %s', async (_, id) => {
      const path = employeesPath(id);
      expect(await get(path)).toEqual({
        status: 404,
        body: errorBody(path, 'Merit cycle not found', 404),
      });
    });

    it('answers the other organisation’s own key normally (the 404 is about access, not the id)', async () => {
      const globex = await server.createKey('globex');
      const body = await page(employeesPath(CYCLE.globex), globex);
      expect(body.data.map((employee) => employee.lastName)).toEqual(Array(5).fill('Scorpio'));
      expect(body.nextCursor).toBeNull();
    });
  });
});
