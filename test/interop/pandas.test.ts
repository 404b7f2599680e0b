// The bulk download read by a client nobody here wrote: pandas (Debian's python3-pandas),
// `read_json(url, lines=True)` and `read_csv(url)` over HTTP with the key in
// storage_options, as docs/bulk-download.md shows. Each reads exactly the employees the
// list endpoint serves, in its order, with their values as served: the nested NDJSON as the
// list's objects, and the flat CSV and flat NDJSON (docs/bulk-download.md, "For analysts")
// typed with no help — amounts and numbers numeric, booleans bool, dates parsed — and no
// json_normalize.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Employee } from '../../src/modules/employees/schema.js';
import { SDK_CYCLE, SDK_ORG, sdkDataSet } from '../client/fixtures.js';
import { ANALYST_CYCLE, ANALYST_ORG, analystDataSet } from '../fixtures/analyst-data-set.js';
import { employeesPath, walkPages } from '../helpers/api-expectations.js';
import { PYTHON } from '../helpers/projects.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const EMPLOYEES = 250;

/** Runs a Python program with the URL and key as its arguments; its standard output as JSON. */
function python(program: string, url: string, key: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      ['-c', program, url, key],
      { maxBuffer: 64 << 20, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`python: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

describe('pandas reads the bulk download', () => {
  let server: TestServer;
  let key: string;
  let listed: Record<string, unknown>[];

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)] });
    key = await server.createKey(SDK_ORG);
    listed = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : '';
      const response = await fetch(
        `${server.url}${employeesPath(SDK_CYCLE.big)}?limit=100${query}`,
        {
          headers: { 'x-api-key': key },
        },
      );
      const page = (await response.json()) as {
        data: Record<string, unknown>[];
        nextCursor: string | null;
      };
      listed.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor);
  });
  afterAll(() => server?.close());

  const bulkUrl = () => `${server.url}${employeesPath(SDK_CYCLE.big)}/bulk`;

  it('read_json(lines=True): one row per employee, each the object the list serves', async () => {
    const rows = await python(
      `import sys, pandas as pd
frame = pd.read_json(sys.argv[1], lines=True, dtype=False, convert_dates=False,
                     storage_options={"x-api-key": sys.argv[2]})
print(frame.to_json(orient="records", force_ascii=False))`,
      bulkUrl(),
      key,
    );
    expect(rows).toHaveLength(EMPLOYEES);
    expect(rows).toEqual(listed);
  });

  it('read_csv with shape=nested: the export’s layout, the flattened columns holding the values the list serves', async () => {
    const rows = (await python(
      `import sys, pandas as pd
frame = pd.read_csv(sys.argv[1] + "?format=csv&shape=nested&bom=false", dtype=str, keep_default_na=False,
                    storage_options={"x-api-key": sys.argv[2]})
print(frame.to_json(orient="records", force_ascii=False))`,
      bulkUrl(),
      key,
    )) as Record<string, string>[];
    expect(rows).toHaveLength(EMPLOYEES);
    const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));
    expect(rows).toEqual(
      listed.map((employee) => {
        const columns = employee.columns as Record<string, { value: unknown }>;
        const composite = (columns.employee?.value ?? {}) as Record<string, unknown>;
        const currency = employee.currencyCode as { code?: string; value?: string };
        return {
          id: employee.id,
          email: employee.email,
          firstName: employee.firstName,
          lastName: employee.lastName,
          preferredName: text(employee.preferredName),
          'currencyCode.code': text(currency.code),
          'currencyCode.value': text(currency.value),
          eligibilityStatus: employee.eligibilityStatus,
          'columns.department': text(columns.department?.value),
          'columns.employee.fullName': text(composite.fullName),
          'columns.employee.jobLevel': text(composite.jobLevel),
          'columns.employee.jobTitle': text(composite.jobTitle),
          'columns.other': '',
        };
      }),
    );
  });
});

// What pandas made of a flat download: each column's dtype, and the rows with NaN as None,
// numbers as Python writes them (the shortest text of the double), Timestamps as ISO text.
const FRAME_AS_JSON = `
import json
def plain(value):
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if pd.isna(value):
        return None
    return value.item() if hasattr(value, "item") else value
print(json.dumps({
    "dtypes": {name: str(dtype) for name, dtype in frame.dtypes.items()},
    "rows": [{name: plain(value) for name, value in row.items()} for row in frame.to_dict(orient="records")],
}, ensure_ascii=False))`;

/** The dtypes pandas gives the flat download of the analysts' cycle, reading it untold. */
const FLAT_DTYPES = {
  id: 'object',
  meritCycleId: 'object',
  email: 'object',
  firstName: 'object',
  lastName: 'object',
  preferredName: 'object',
  currencyCode: 'object',
  currencyName: 'object',
  eligibilityStatus: 'object',
  currency: 'object',
  basePay: 'float64',
  bonus_pct_2: 'float64',
  department: 'object',
  eligible: 'bool',
  employee_jobLevel: 'int64',
  employee_jobTitle: 'object',
  employee_target: 'float64',
  hireDate: 'datetime64[ns]',
  rating: 'object',
};

describe('pandas reads the flat bulk download typed, with no json_normalize', () => {
  let server: TestServer;
  let key: string;
  let expected: Record<string, unknown>[];

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [analystDataSet(EMPLOYEES)] });
    key = await server.createKey(ANALYST_ORG);
    const listed = (
      await walkPages<Employee>(server, key, employeesPath(ANALYST_CYCLE.pay), { limit: 100 })
    ).items;
    // Each employee as pandas holds it: amounts and numbers the double of their decimal,
    // the date a Timestamp at midnight, the open type's value its JSON text.
    expected = listed.map((employee) => {
      const value = (key: string) => employee.columns[key]?.value ?? null;
      const composite = value('employee') as Record<string, unknown>;
      const amount = (money: unknown) => Number((money as { USD: string }).USD);
      const bonus = value('bonus_pct');
      return {
        id: employee.id,
        meritCycleId: ANALYST_CYCLE.pay,
        email: employee.email,
        firstName: employee.firstName,
        lastName: employee.lastName,
        preferredName: employee.preferredName ?? null,
        currencyCode: employee.currencyCode.code,
        currencyName: employee.currencyCode.value,
        eligibilityStatus: employee.eligibilityStatus,
        currency: 'USD',
        basePay: amount(value('basePay')),
        bonus_pct_2: bonus === null ? null : Number(bonus),
        department: value('department'),
        eligible: value('eligible'),
        employee_jobLevel: Number(composite.jobLevel),
        employee_jobTitle: composite.jobTitle,
        employee_target: amount(composite.target),
        hireDate: `${value('hireDate') as string}T00:00:00`,
        rating: JSON.stringify(value('rating')),
      };
    });
  }, 120_000);
  afterAll(() => server?.close());

  const bulkUrl = () => `${server.url}${employeesPath(ANALYST_CYCLE.pay)}/bulk`;

  it('read_csv(parse_dates=…): amounts and numbers numeric, booleans bool, the date parsed, the BOM read as UTF-8, rows as REST serves them', async () => {
    const frame = (await python(
      `import sys, pandas as pd
frame = pd.read_csv(sys.argv[1] + "?format=csv", parse_dates=["hireDate"],
                    storage_options={"x-api-key": sys.argv[2]})${FRAME_AS_JSON}`,
      bulkUrl(),
      key,
    )) as { dtypes: Record<string, string>; rows: Record<string, unknown>[] };
    expect(frame.dtypes).toEqual(FLAT_DTYPES);
    expect(frame.rows).toEqual(expected);
  });

  it('read_json(lines=True) of shape=flat: the same frame, no json_normalize', async () => {
    const frame = (await python(
      `import sys, pandas as pd
frame = pd.read_json(sys.argv[1] + "?format=ndjson&shape=flat", lines=True, convert_dates=["hireDate"],
                     precise_float=True, storage_options={"x-api-key": sys.argv[2]})${FRAME_AS_JSON}`,
      bulkUrl(),
      key,
    )) as { dtypes: Record<string, string>; rows: Record<string, unknown>[] };
    expect(frame.dtypes).toEqual(FLAT_DTYPES);
    expect(frame.rows).toEqual(expected);
  });
});
