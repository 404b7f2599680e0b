// The bulk download's flat shape (docs/bulk-download.md, "For analysts"): the CSV by
// default and `format=ndjson&shape=flat`. A column only for what the cycle holds, named as
// the OData feed names its properties (a collision between cycles included), typed: the
// CSV's cells and the flat NDJSON's values are what the list serves, amounts exact to the
// last digit; the flat NDJSON is the feed's entity of each employee and the cycle's
// currency; hidden columns (by key and by type) are absent; the ETag follows the shape;
// a bad shape is 422. Runs on every database.
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Employee } from '../../src/modules/employees/schema.js';
import {
  ANALYST_CYCLE,
  ANALYST_ORG,
  analystDataSet,
  LONG_AMOUNT,
} from '../fixtures/analyst-data-set.js';
import { employeesPath, errorBody, walkPages } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// More than one chunk of the download (2,000 employees a statement).
const EMPLOYEES = 2_300;

const bulkPath = (cycle: string, query = '') => `${employeesPath(cycle)}/bulk${query}`;

const HEADER = [
  'id',
  'meritCycleId',
  'email',
  'firstName',
  'lastName',
  'preferredName',
  'currencyCode',
  'currencyName',
  'eligibilityStatus',
  'currency',
  'basePay',
  'bonus_pct_2',
  'department',
  'eligible',
  'employee_jobLevel',
  'employee_jobTitle',
  'employee_target',
  'hireDate',
  'rating',
];

type Cell = string | boolean | null;

/**
 * What the flat row of an employee the list serves holds, by property, as the fixture's
 * columns are typed: decimals as their stored text, dates and text as strings, booleans,
 * the open type as its JSON text, null where the employee has no value.
 */
function flatOf(employee: Employee, cycle: string): Record<string, Cell> {
  const value = (key: string) => employee.columns[key]?.value ?? null;
  const composite = (value('employee') ?? {}) as Record<string, unknown>;
  const usd = (amount: unknown) => (amount === null ? null : (amount as { USD: string }).USD);
  return {
    id: employee.id,
    meritCycleId: cycle,
    email: employee.email,
    firstName: employee.firstName,
    lastName: employee.lastName,
    preferredName: employee.preferredName ?? null,
    currencyCode: employee.currencyCode.code ?? null,
    currencyName: employee.currencyCode.value ?? null,
    eligibilityStatus: employee.eligibilityStatus,
    currency: 'USD',
    basePay: usd(value('basePay')),
    bonus_pct_2: value('bonus_pct') as string | null,
    department: value('department') as string,
    eligible: value('eligible') as boolean,
    employee_jobLevel: composite.jobLevel as string,
    employee_jobTitle: composite.jobTitle as string,
    employee_target: usd(composite.target ?? null),
    hireDate: value('hireDate') as string,
    rating: JSON.stringify(value('rating')),
  };
}

/** A flat row's values as CSV reads them back: text, `true`/`false`, null as empty. */
const asCells = (row: Record<string, Cell>) =>
  Object.values(row).map((cell) => (cell === null ? '' : String(cell)));

describe('the bulk download’s flat shape', () => {
  let server: TestServer;
  let key: string;
  let listed: Employee[];

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [analystDataSet(EMPLOYEES)] });
    key = await server.createKey(ANALYST_ORG);
    listed = (
      await walkPages<Employee>(server, key, employeesPath(ANALYST_CYCLE.pay), { limit: 100 })
    ).items;
  }, 120_000);
  afterAll(() => server?.close());

  const get = (path: string, withKey = key, headers: Record<string, string> = {}) =>
    server.request(path, { key: withKey, headers });

  it('CSV by default: BOM, the feed’s property names, a column only for the cycle’s columns, the list’s values typed, across chunks', async () => {
    const response = await get(bulkPath(ANALYST_CYCLE.pay, '?format=csv'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const text = Buffer.from(await response.arrayBuffer()).toString('utf8');
    expect(text.startsWith(`\uFEFF${HEADER.join(',')}\r\n`)).toBe(true);
    const [header, ...rows] = parse(text.slice(1)) as string[][];
    expect(header).toEqual(HEADER);
    expect(rows).toHaveLength(EMPLOYEES);
    expect(rows).toEqual(listed.map((employee) => asCells(flatOf(employee, ANALYST_CYCLE.pay))));
    // The amount beyond a double's precision, digit for digit; no currency object anywhere.
    expect(rows[listed.findIndex((e) => e.id.endsWith('000000000002'))]?.[10]).toBe(LONG_AMOUNT);
    expect(text).not.toContain('{""USD""');
  });

  it('format=ndjson&shape=flat: one flat object a line, JSON types, decimals as JSON numbers of the stored text', async () => {
    const response = await get(bulkPath(ANALYST_CYCLE.pay, '?format=ndjson&shape=flat'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const body = await response.text();
    const lines = body.slice(0, -1).split('\n');
    expect(body.endsWith('\n')).toBe(true);
    expect(lines).toHaveLength(EMPLOYEES);
    const decimals = new Set(['basePay', 'bonus_pct_2', 'employee_jobLevel', 'employee_target']);
    expect(lines).toEqual(
      listed.map((employee) => {
        const row = flatOf(employee, ANALYST_CYCLE.pay);
        const members = Object.entries(row).map(
          ([name, cell]) =>
            `${JSON.stringify(name)}:${cell !== null && decimals.has(name) ? cell : JSON.stringify(cell)}`,
        );
        return `{${members.join(',')}}`;
      }),
    );
    expect(body).toContain(`"basePay":${LONG_AMOUNT},`);
  });

  it('flat NDJSON is the OData feed’s entity of each employee, with the cycle’s currency', async () => {
    const flat = (await (await get(bulkPath(ANALYST_CYCLE.pay, '?shape=flat'))).text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const entities: Record<string, unknown>[] = [];
    let next: string | undefined =
      `${server.url}/odata/v4/MeritCycles('${ANALYST_CYCLE.pay}')/Employees`;
    while (next) {
      const page = (await (await fetch(next, { headers: { 'x-api-key': key } })).json()) as {
        value: Record<string, unknown>[];
        '@odata.nextLink'?: string;
      };
      entities.push(...page.value);
      next = page['@odata.nextLink'];
    }
    // The feed's Employee has the columns of every cycle the key reads: the other cycle's
    // `bonus-pct` as `bonus_pct` is null here, and has no column in this cycle's download.
    const byId = new Map(
      entities.map(({ bonus_pct, ...entity }) => {
        expect(bonus_pct).toBeNull();
        return [entity.id, entity];
      }),
    );
    expect(flat).toHaveLength(entities.length);
    for (const row of flat) {
      const { currency, ...rest } = row;
      expect(currency).toBe('USD');
      expect(rest).toEqual(byId.get(row.id));
      expect(Object.keys(rest)).toEqual(Object.keys(byId.get(row.id) ?? {}));
    }
  });

  it('has no column for what a cycle does not hold: an empty cycle is the header of the employee’s own fields', async () => {
    const csv = await get(bulkPath(ANALYST_CYCLE.empty, '?format=csv&bom=false'));
    expect(await csv.text()).toBe(`${HEADER.slice(0, 9).join(',')}\r\n`);
    const ndjson = await get(bulkPath(ANALYST_CYCLE.empty, '?shape=flat'));
    expect(await ndjson.text()).toBe('');
    const other = await get(bulkPath(ANALYST_CYCLE.other, '?format=csv&bom=false'));
    expect(await other.text()).toBe(
      `${[...HEADER.slice(0, 9), 'bonus_pct'].join(',')}\r\nmce_60000000-0000-4000-8000-100000000001,${ANALYST_CYCLE.other},other@analysts.example,Other,One,,USD,US Dollar,eligible,0.5\r\n`,
    );
  });

  it('leaves out what a key hides, by key and by type: no column, no currency column without an amount', async () => {
    const byKey = await server.createKey(ANALYST_ORG, 'no pay', {
      hiddenColumns: ['basePay', 'employee'],
    });
    const byType = await server.createKey(ANALYST_ORG, 'no amounts', {
      hiddenColumnTypes: ['currency', 'boolean'],
    });
    const headerOf = async (withKey: string) =>
      (await (await get(bulkPath(ANALYST_CYCLE.pay, '?format=csv&bom=false'), withKey)).text())
        .split('\r\n')[0]
        ?.split(',');
    const without = (...names: string[]) => HEADER.filter((name) => !names.includes(name));
    expect(await headerOf(byKey)).toEqual(
      without('currency', 'basePay', 'employee_jobLevel', 'employee_jobTitle', 'employee_target'),
    );
    expect(await headerOf(byType)).toEqual(
      without('currency', 'basePay', 'employee_target', 'eligible'),
    );
    const flat = await (await get(bulkPath(ANALYST_CYCLE.pay, '?shape=flat'), byType)).text();
    const first = JSON.parse(flat.split('\n')[0] ?? '{}') as Record<string, unknown>;
    expect(Object.keys(first)).toEqual(
      without('currency', 'basePay', 'employee_target', 'eligible'),
    );
    expect(flat).not.toContain('"currency":');
    expect(flat).not.toContain('"basePay":');
  });

  it('tags each shape apart: nested and flat, NDJSON and CSV, four ETags; If-None-Match answers 304 for its own', async () => {
    const tags = new Map<string, string>();
    for (const query of [
      '',
      '?shape=flat',
      '?format=csv',
      '?format=csv&shape=nested',
      '?shape=nested',
      '?format=csv&shape=flat',
    ]) {
      const response = await get(bulkPath(ANALYST_CYCLE.pay, query));
      await response.arrayBuffer();
      tags.set(query, response.headers.get('etag') ?? '');
    }
    // A shape asked for by name is the same answer as the format's default.
    expect(tags.get('?shape=nested')).toBe(tags.get(''));
    expect(tags.get('?format=csv&shape=flat')).toBe(tags.get('?format=csv'));
    expect(
      new Set([
        tags.get(''),
        tags.get('?shape=flat'),
        tags.get('?format=csv'),
        tags.get('?format=csv&shape=nested'),
      ]).size,
    ).toBe(4);
    const again = await get(bulkPath(ANALYST_CYCLE.pay, '?shape=flat'), key, {
      'if-none-match': tags.get('?shape=flat') ?? '',
    });
    expect(again.status).toBe(304);
    const other = await get(bulkPath(ANALYST_CYCLE.pay, '?format=csv'), key, {
      'if-none-match': tags.get('?shape=flat') ?? '',
    });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });

  it('refuses a shape it does not know (422, the standard validation body)', async () => {
    for (const query of ['?shape=round', '?shape=', '?format=csv&shape=FLAT']) {
      const response = await get(bulkPath(ANALYST_CYCLE.pay, query));
      expect(response.status, query).toBe(422);
      expect(await response.json()).toEqual(
        errorBody(
          bulkPath(ANALYST_CYCLE.pay),
          'Invalid query parameters: shape: Invalid option: expected one of "nested"|"flat"',
          422,
          [
            {
              path: 'shape',
              message: 'Invalid option: expected one of "nested"|"flat"',
              code: 'invalid_value',
            },
          ],
        ),
      );
    }
  });
});
