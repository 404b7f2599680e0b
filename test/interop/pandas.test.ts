// The bulk download read by a client nobody here wrote: pandas (Debian's python3-pandas),
// `read_json(url, lines=True)` and `read_csv(url)` over HTTP with the key in
// storage_options, as docs/bulk-download.md shows. Each reads exactly the employees the
// list endpoint serves, in its order, with their values as served.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SDK_CYCLE, SDK_ORG, sdkDataSet } from '../client/fixtures.js';
import { employeesPath } from '../helpers/api-expectations.js';
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

  it('read_csv: one row per employee, the flattened columns holding the values the list serves', async () => {
    const rows = (await python(
      `import sys, pandas as pd
frame = pd.read_csv(sys.argv[1] + "?format=csv&bom=false", dtype=str, keep_default_na=False,
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
