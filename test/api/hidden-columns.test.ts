// Hidden columns (docs/api-keys.md): a key made with `--hide-columns` (column keys) or
// `--hide-column-types` (every column of some types, composite parts of those types
// included) reads every employee without those columns on every path — every page, HEAD,
// compressed and cached answers, deltas, the column schema, bulk NDJSON and CSV, the OData
// feed (where a hidden column is an unknown property) and `compplan export` — and each
// employee is otherwise exactly what a full key reads, byte for byte, whatever its column
// keys (`__proto__`, dots, quotes) and values. A full key and a hiding key reading the same
// URL in turn never get each other's kept answer. Each way of hiding is a row of
// RESTRICTIONS; every test runs for each. Runs on every database.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewKeyInput } from '../../src/api-keys/service.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { EDGE_CYCLE, PROTO_CYCLE, UMBRELLA, umbrellaDataSet } from '../fixtures/api-data-sets.js';
import { FEED_CYCLE, FEEDCO, feedDataSet } from '../fixtures/feed-data-sets.js';
import { columnsPath, employeesPath, MERIT_CYCLES } from '../helpers/api-expectations.js';
import { runCli } from '../helpers/cli.js';
import { feed, walk } from '../helpers/feed.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Keys of the edge employees' columns that are hard to cut out of a JSON text by hand, one
// present in every employee, and one in none (a column of data still to come).
const HIDDEN = ['__proto__', 'quoting', 'a.b[0]', 'constructor', 'department', 'salary'];
const PAGE_SIZES = [1, 4, 100];

type Part = { key: string; type: string };
type Column = { key: string; name: string; type: string; parts: Part[] | null };
type Employee = { columns: Record<string, { type: string; value: unknown }> };

/** What a row's key does not read of a cycle, by the cycle's full column schema. */
interface Hidden {
  keys: string[];
  /** Composite column key → the parts taken out of its value. */
  parts: Record<string, string[]>;
}

interface Restriction {
  name: string;
  org: string;
  /** The cycles read, each with columns the key hides. */
  cycles: string[];
  restrictions: Omit<NewKeyInput, 'org' | 'name'>;
  hiddenIn: (schema: Column[]) => Hidden;
  /** The feed's properties the key does not have: in the full key's $metadata, not in its. */
  feedProperties: string[];
  /** The cells of the full key's CSV header (first cycle) the key's header has not. */
  csvAbsent: string[];
}

const byTypes =
  (types: string[]) =>
  (schema: Column[]): Hidden => ({
    keys: schema.filter((c) => types.includes(c.type)).map((c) => c.key),
    parts: Object.fromEntries(
      schema
        .filter((c) => c.parts !== null && !types.includes(c.type))
        .map((c): [string, string[]] => [
          c.key,
          (c.parts ?? []).filter((p) => types.includes(p.type)).map((p) => p.key),
        ])
        .filter(([, parts]) => parts.length > 0),
    ),
  });

/**
 * Feed Co's data with composite parts of the hidden types: a grade (a number) and a target
 * bonus (a currency object) in each Feed 2025 employee's `employee` column.
 */
function payDataSet(): DataSetInput {
  const data = feedDataSet();
  const [usd] = data.meritCycles;
  for (const [index, employee] of (usd?.employees ?? []).entries()) {
    const columns = employee.columns as Record<string, { value: Record<string, unknown> }>;
    const column = columns.employee as { value: Record<string, unknown> };
    column.value.grade = String(index + 3);
    column.value.targetBonus = { USD: `${5000 + index}.00` };
  }
  return data;
}

const RESTRICTIONS: Restriction[] = [
  {
    name: 'column keys (--hide-columns)',
    org: UMBRELLA,
    cycles: [EDGE_CYCLE, PROTO_CYCLE],
    restrictions: { hiddenColumns: HIDDEN, allowUnknownColumns: true },
    hiddenIn: () => ({ keys: HIDDEN, parts: {} }),
    feedProperties: ['__proto__', 'quoting', 'a_b_0_', 'constructor', 'department'],
    csvAbsent: ['columns.a.b[0]', 'columns.constructor', 'columns.department', 'columns.quoting'],
  },
  {
    name: 'column types (--hide-column-types currency,number)',
    org: FEEDCO,
    cycles: [FEED_CYCLE.usd, FEED_CYCLE.eur],
    restrictions: { hiddenColumnTypes: ['currency', 'number'] },
    hiddenIn: byTypes(['currency', 'number']),
    // department is text in one cycle and a number in the other: hidden in one, the
    // feed's one property for it would read both, so the key has none.
    feedProperties: [
      'basePay',
      'bonus__',
      'compaRatio',
      'department',
      'employee_grade',
      'employee_targetBonus',
      'salary',
    ],
    csvAbsent: [
      'columns.basePay',
      'columns.bonus %',
      'columns.compaRatio',
      'columns.employee.grade',
      'columns.employee.targetBonus',
    ],
  },
];

/** The `data` array of a page exactly as served: the bytes between `{"data":` and `,"nextCursor"`. */
function dataText(body: string): string {
  expect(body.startsWith('{"data":')).toBe(true);
  return body.slice('{"data":'.length, body.lastIndexOf(',"nextCursor":'));
}

/** Employees as a full key reads them, without what `hidden` says. */
function withoutHiddenOf(employees: Employee[], hidden: Hidden): Employee[] {
  for (const employee of employees) {
    if (!employee.columns) continue;
    for (const key of hidden.keys) {
      if (Object.hasOwn(employee.columns, key)) delete employee.columns[key];
    }
    for (const [key, parts] of Object.entries(hidden.parts)) {
      const value = employee.columns[key]?.value as Record<string, unknown> | null | undefined;
      for (const part of parts) if (value && Object.hasOwn(value, part)) delete value[part];
    }
  }
  return employees;
}

async function responseCacheCount(server: TestServer, result: 'hit' | 'miss') {
  const { values } = await server.app.metrics.responseCache.get();
  return values.find((v) => v.labels.result === result)?.value ?? 0;
}

describe.each(RESTRICTIONS)('hidden columns: $name', (row) => {
  let server: TestServer;
  let full: string;
  let hiding: string;
  /** Each cycle's full column schema, and what the key hides of it. */
  const schemas = new Map<string, Column[]>();
  const hiddenOf = (cycle: string) => row.hiddenIn(schemas.get(cycle) ?? []);

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [umbrellaDataSet(), payDataSet()] });
    full = await server.createKey(row.org, 'full');
    hiding = await server.createKey(row.org, 'no pay', row.restrictions);
    for (const cycle of row.cycles) {
      const response = await server.request(columnsPath(cycle), { key: full });
      schemas.set(cycle, ((await response.json()) as { data: Column[] }).data);
    }
  });
  afterAll(() => server?.close());

  /** What a hiding key must be served for a full key's page: the hidden columns taken out. */
  const withoutHidden = (fullBody: string, cycle: string) =>
    JSON.stringify(
      withoutHiddenOf((JSON.parse(fullBody) as { data: Employee[] }).data, hiddenOf(cycle)),
    );

  /** Every page of a cycle's employees, as texts, for a key. */
  async function pagesOf(key: string, cycle: string, limit: number, path = ''): Promise<string[]> {
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : '';
      const response = await server.request(
        `${employeesPath(cycle)}${path}?limit=${limit}${query}`,
        { key },
      );
      expect(response.status).toBe(200);
      const body = await response.text();
      pages.push(body);
      cursor = (JSON.parse(body) as { nextCursor: string | null }).nextCursor;
    } while (cursor);
    return pages;
  }

  it('hides something: each cycle has columns (or parts) the key hides, which a full key reads', async () => {
    for (const cycle of row.cycles) {
      const hidden = hiddenOf(cycle);
      const present = [...hidden.keys, ...Object.keys(hidden.parts)].filter((key) =>
        schemas.get(cycle)?.some((column) => column.key === key),
      );
      expect(present.length, cycle).toBeGreaterThan(0);
      const page = (await pagesOf(full, cycle, 100)).join('\n');
      for (const key of present) {
        expect(page).toContain(`"${JSON.stringify(key).slice(1, -1)}":{"name"`);
      }
    }
  });

  it.each(PAGE_SIZES)(
    'every page (limit %i): each employee exactly as a full key reads it, without the hidden columns',
    async (limit) => {
      for (const cycle of row.cycles) {
        const fullPages = await pagesOf(full, cycle, limit);
        const hiddenPages = await pagesOf(hiding, cycle, limit);
        expect(hiddenPages).toHaveLength(fullPages.length);
        fullPages.forEach((fullPage, index) => {
          const served = dataText(hiddenPages[index] ?? '');
          expect(served).toBe(withoutHidden(fullPage, cycle));
          for (const key of hiddenOf(cycle).keys) {
            expect(served).not.toContain(`"${JSON.stringify(key).slice(1, -1)}":{"name"`);
          }
        });
      }
    },
  );

  it('deltas: each employee exactly as a full key reads it, without the hidden columns', async () => {
    for (const cycle of row.cycles) {
      const fullPages = await pagesOf(full, cycle, 2, '/delta');
      const hiddenPages = await pagesOf(hiding, cycle, 2, '/delta');
      expect(hiddenPages).toHaveLength(fullPages.length);
      fullPages.forEach((fullPage, index) => {
        const served = JSON.parse(hiddenPages[index] ?? '') as { data: unknown[] };
        expect(JSON.stringify(served.data)).toBe(withoutHidden(fullPage, cycle));
      });
    }
  });

  it('the column schema of each cycle: every column but those hidden, composites without hidden parts', async () => {
    for (const cycle of row.cycles) {
      const hidden = hiddenOf(cycle);
      const expected = (schemas.get(cycle) ?? [])
        .filter((column) => !hidden.keys.includes(column.key))
        .map((column) => ({
          ...column,
          parts:
            column.parts?.filter((part) => !(hidden.parts[column.key] ?? []).includes(part.key)) ??
            null,
        }));
      const response = await server.request(columnsPath(cycle), { key: hiding });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { data: Column[] }).data).toEqual(expected);
    }
  });

  it('bulk download: NDJSON exactly the full key’s without the hidden columns; CSV (nested and flat) without their cells', async () => {
    for (const cycle of row.cycles) {
      const fullNdjson = await (
        await server.request(`${employeesPath(cycle)}/bulk`, { key: full })
      ).text();
      const ndjson = await (
        await server.request(`${employeesPath(cycle)}/bulk`, { key: hiding })
      ).text();
      const fullEmployees = fullNdjson
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Employee);
      expect(`[${ndjson.trimEnd().split('\n').join(',')}]`).toBe(
        JSON.stringify(withoutHiddenOf(fullEmployees, hiddenOf(cycle))),
      );
    }
    const csvOf = async (key: string, shape: 'nested' | 'flat') =>
      (
        await server.request(
          `${employeesPath(row.cycles[0] ?? '')}/bulk?format=csv&shape=${shape}&bom=false`,
          { key },
        )
      ).text();
    const csv = await csvOf(hiding, 'nested');
    const fullCsv = await csvOf(full, 'nested');
    const [header = ''] = csv.split('\r\n');
    const [fullHeader = ''] = fullCsv.split('\r\n');
    for (const cell of row.csvAbsent) expect(fullHeader.split(',')).toContain(cell);
    expect(header.split(',')).toEqual(
      fullHeader.split(',').filter((cell) => !row.csvAbsent.includes(cell)),
    );
    expect(csv.split('\r\n')).toHaveLength(fullCsv.split('\r\n').length);
    // The flat CSV: the feed's property names, without the feed's hidden properties (and
    // without the cycle's currency when no amount is left).
    const flat = await csvOf(hiding, 'flat');
    const fullFlat = await csvOf(full, 'flat');
    const flatAbsent = [
      ...row.feedProperties,
      ...(row.restrictions.hiddenColumnTypes?.includes('currency') ? ['currency'] : []),
    ];
    const [flatHeader = ''] = flat.split('\r\n');
    const [fullFlatHeader = ''] = fullFlat.split('\r\n');
    expect(flatHeader.split(',')).toEqual(
      fullFlatHeader.split(',').filter((name) => !flatAbsent.includes(name)),
    );
    expect(flat.split('\r\n')).toHaveLength(fullFlat.split('\r\n').length);
  });

  it('OData: the hidden columns are no properties of the key, in $metadata or in rows', async () => {
    const fullXml = (await feed(server, '/$metadata', { key: full })).text;
    const xml = (await feed(server, '/$metadata', { key: hiding })).text;
    for (const name of row.feedProperties) {
      expect(fullXml).toContain(`<Property Name="${name}"`);
      expect(xml).not.toContain(`<Property Name="${name}"`);
    }
    const fullProperties = [...fullXml.matchAll(/<Property Name="([^"]+)"/g)].map((m) => m[1]);
    const properties = [...xml.matchAll(/<Property Name="([^"]+)"/g)].map((m) => m[1]);
    expect(properties).toEqual(
      fullProperties.filter((name) => !row.feedProperties.includes(name ?? '')),
    );
    const rows = await walk(server, '/Employees', hiding);
    const fullRows = await walk(server, '/Employees', full);
    expect(rows.entities).toEqual(
      fullRows.entities.map((entity) =>
        Object.fromEntries(
          Object.entries(entity).filter(([name]) => !row.feedProperties.includes(name)),
        ),
      ),
    );
  });

  it('OData: $select, $filter and $orderby naming a hidden column answer exactly as for an unknown property', async () => {
    const unknown = 'noSuchColumn';
    for (const name of row.feedProperties) {
      for (const query of [
        `$select=id,${name}`,
        `$filter=${name} eq null`,
        `$orderby=${name}`,
        `$orderby=id,${name} desc`,
      ]) {
        const hidden = await feed(server, `/Employees?${query}`, { key: hiding });
        const absent = await feed(server, `/Employees?${query.replace(name, unknown)}`, {
          key: hiding,
        });
        expect(absent.status, query).toBeGreaterThanOrEqual(400);
        expect(hidden.status, query).toBe(absent.status);
        expect(hidden.text, query).toBe(absent.text.replace(unknown, name));
      }
      // For the full key it is a property ($metadata above), which $select names.
      const named = await feed(server, `/Employees?$select=id,${name}&$top=1`, { key: full });
      expect(named.status, name).toBe(200);
      expect(Object.keys(named.json.value[0])).toEqual(['id', name]);
    }
  });

  it('a full key and a hiding key reading the same URL in turn each get their own answer, kept for each', async () => {
    const cycle = row.cycles[0] ?? '';
    const url = `${employeesPath(cycle)}?limit=100`;
    const expectedFull = await (await server.request(url, { key: full })).text();
    const expectedHidden = await (await server.request(url, { key: hiding })).text();
    expect(dataText(expectedHidden)).toBe(withoutHidden(expectedFull, cycle));
    const hitsBefore = await responseCacheCount(server, 'hit');
    for (let round = 0; round < 3; round++) {
      for (const [key, expected] of [
        [full, expectedFull],
        [hiding, expectedHidden],
      ] as const) {
        const response = await server.request(url, { key });
        expect(await response.text()).toBe(expected);
      }
    }
    expect((await responseCacheCount(server, 'hit')) - hitsBefore).toBe(6);
  });

  it('HEAD, gzip and If-None-Match: no hidden column anywhere, and the ETag differs from a full key’s', async () => {
    const url = `${employeesPath(row.cycles[0] ?? '')}?limit=100`;
    const plainFull = await server.request(url, { key: full });
    const plainHidden = await server.request(url, { key: hiding });
    const hiddenBody = await plainHidden.text();
    const fullTag = plainFull.headers.get('etag');
    const hiddenTag = plainHidden.headers.get('etag');
    expect(hiddenTag).toMatch(/^W\/"/);
    expect(hiddenTag).not.toBe(fullTag);

    const gzipped = await nodeRequest(server.url, url, {
      headers: { 'x-api-key': hiding, 'accept-encoding': 'gzip' },
    });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.rawBody).toString('utf8')).toBe(hiddenBody);
    expect(gzipped.headers.etag).toBe(hiddenTag);

    const head = await server.request(url, { key: hiding, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(hiddenTag);

    // A full key's tag is no match for the hiding key's answer, and the other way round.
    const withFullTag = await server.request(url, {
      key: hiding,
      headers: { 'if-none-match': fullTag ?? '' },
    });
    expect(withFullTag.status).toBe(200);
    expect(await withFullTag.text()).toBe(hiddenBody);
    const withOwnTag = await server.request(url, {
      key: hiding,
      headers: { 'if-none-match': hiddenTag ?? '' },
    });
    expect(withOwnTag.status).toBe(304);
  });

  it('merit cycles read the same as for a full key (hidden columns are employee columns)', async () => {
    for (const id of row.cycles) {
      const cycle = `${MERIT_CYCLES}/${id}`;
      for (const path of [cycle, `${cycle}/exchangeRates`]) {
        const a = await (await server.request(path, { key: full })).text();
        const b = await (await server.request(path, { key: hiding })).text();
        expect(b).toBe(a);
      }
    }
  });

  it('compplan export with the hiding key writes no hidden column (NDJSON and CSV)', async () => {
    const cycle = row.cycles[0] ?? '';
    const exported = async (format: string) => {
      const result = await runCli(
        ['export', 'employees', '--cycle', cycle, '--format', format, '--base-url', server.url],
        { env: { COMPPLAN_API_KEY: hiding, COMPPLAN_BASE_URL: undefined }, timeoutMs: 30_000 },
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      return result.stdout;
    };
    const ndjson = (await exported('ndjson')).trimEnd().split('\n');
    const fullPage = await (
      await server.request(`${employeesPath(cycle)}?limit=100`, { key: full })
    ).text();
    expect(`[${ndjson.join(',')}]`).toBe(withoutHidden(fullPage, cycle));

    const [header = ''] = (await exported('csv')).replace(/^\uFEFF/, '').split('\r\n');
    expect(header).toContain('columns.employee');
    for (const cell of row.csvAbsent) expect(header.split(',')).not.toContain(cell);
  });
});
