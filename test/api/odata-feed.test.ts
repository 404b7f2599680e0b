// The OData feed (docs/odata.md) over real HTTP, on every database: the service document,
// $metadata, the entity sets and the navigation, each property's value against the REST
// API's, the query options (exact results of each filter operator on each kind of
// property), the refusals (501, 400, 404), server-driven paging and the protocol headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Employee } from '../../src/modules/employees/schema.js';
import { FEED_CYCLE, FEEDCO, feedDataSet } from '../fixtures/feed-data-sets.js';
import {
  employeesPath,
  walkPages,
  withCharacterChanged,
  withWrongChecksum,
} from '../helpers/api-expectations.js';
import { FEED, feed, feedEmployeeFields, walk } from '../helpers/feed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Entity = Record<string, unknown>;
const dataSet = feedDataSet();
const ALL_EMPLOYEES = dataSet.meritCycles.flatMap((cycle) =>
  (cycle.employees ?? []).map((employee) => ({ cycle, employee })),
);
const USD_IDS = (dataSet.meritCycles[0]?.employees ?? []).map((e) => e.id as string);
const EUR_EMPLOYEE = 'mce_60000000-0000-4000-8000-100000000001';
const n = (id: string) => Number(id.slice(-2));

const ids = (entities: Entity[]) => entities.map((entity) => entity.id as string).sort();

describe('the OData feed', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet()] });
    key = await server.createKey(FEEDCO);
  });
  afterAll(() => server.close());

  const get = (path: string, headers?: Record<string, string>) =>
    feed(server, path, { key, ...(headers && { headers }) });

  it('serves the service document, naming the three entity sets, with OData-Version 4.0', async () => {
    for (const path of ['/', '']) {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(response.headers.get('odata-version')).toBe('4.0');
      expect(response.headers.get('content-type')).toMatch(
        /^application\/json;odata\.metadata=minimal;/,
      );
      expect(response.json).toEqual({
        '@odata.context': `${server.url}${FEED}/$metadata`,
        value: [
          { name: 'MeritCycles', kind: 'EntitySet', url: 'MeritCycles' },
          { name: 'Employees', kind: 'EntitySet', url: 'Employees' },
          { name: 'ExchangeRates', kind: 'EntitySet', url: 'ExchangeRates' },
        ],
      });
    }
  });

  it('describes every column as a flat typed property in $metadata: names mapped, display names annotated', async () => {
    const response = await get('/$metadata', { accept: 'application/xml' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const xml = response.text;
    const property = (name: string) =>
      new RegExp(`<Property Name="${name}" [^>]*?/?>`).exec(xml)?.[0] ?? `(no ${name})`;
    expect(property('basePay')).toBe(
      '<Property Name="basePay" Type="Edm.Decimal" Scale="variable">',
    );
    expect(property('compaRatio')).toContain('Type="Edm.Decimal"');
    expect(property('hireDate')).toContain('Type="Edm.Date"');
    expect(property('remote')).toContain('Type="Edm.Boolean"');
    expect(property('employee_fullName')).toContain('Type="Edm.String"');
    expect(property('employee_jobTitle')).toContain('Type="Edm.String"');
    // A custom type: its JSON as a string. A key that is text in one cycle and a number in
    // the other: a string. A key that is no identifier: mapped, its key annotated.
    expect(property('rating')).toContain('Type="Edm.String"');
    expect(property('department')).toContain('Type="Edm.String"');
    expect(xml).toContain(
      '<Property Name="bonus__" Type="Edm.Decimal" Scale="variable"><Annotation Term="Core.Description" String="Bonus %"/><Annotation Term="Compplan.ColumnKey" String="bonus %"/></Property>',
    );
    expect(xml).toContain('<Annotation Term="Core.Description" String="Base pay"/>');
    expect(xml).toContain(
      '<EntitySet Name="MeritCycles" EntityType="Compplan.MeritCycle"><NavigationPropertyBinding Path="Employees" Target="Employees"/>',
    );
    expect(xml).toContain(
      '<Key><PropertyRef Name="meritCycleId"/><PropertyRef Name="currency"/></Key>',
    );
  });

  it('serves $metadata as CSDL JSON with $format=json or Accept: application/json, the same model', async () => {
    const byFormat = await get('/$metadata?$format=json');
    const byAccept = await get('/$metadata', { accept: 'application/json' });
    expect(byFormat.status).toBe(200);
    expect(byAccept.json).toEqual(byFormat.json);
    const employee = byFormat.json.Compplan.Employee;
    expect(employee.$Key).toEqual(['id']);
    expect(employee.basePay).toEqual({
      $Type: 'Edm.Decimal',
      $Nullable: true,
      $Scale: 'variable',
      '@Core.Description': 'Base pay',
      '@Compplan.ColumnKey': 'basePay',
    });
    expect(employee.hireDate.$Type).toBe('Edm.Date');
    expect(employee.preferredName).toEqual({ $Nullable: true });
    expect(byFormat.json.$EntityContainer).toBe('Compplan.Container');
  });

  it('serves every employee with exactly the values REST serves, decimals digit for digit', async () => {
    const { entities } = await walk(server, '/Employees', key);
    expect(ids(entities)).toEqual(ALL_EMPLOYEES.map(({ employee }) => employee.id).sort());
    for (const cycleId of Object.values(FEED_CYCLE)) {
      const rest = await walkPages<Employee>(server, key, employeesPath(cycleId), { limit: 100 });
      for (const employee of rest.items) {
        const entity = entities.find((e) => e.id === employee.id) as Entity;
        const columns = employee.columns;
        const amount = (value: unknown) =>
          value === undefined || value === null
            ? null
            : Number(Object.values(value as Record<string, string>)[0]);
        expect(entity).toEqual({
          ...feedEmployeeFields(employee, cycleId),
          basePay: amount(columns.basePay?.value),
          bonus__: columns['bonus %'] ? Number(columns['bonus %'].value) : null,
          compaRatio: columns.compaRatio?.value == null ? null : Number(columns.compaRatio.value),
          department: columns.department === undefined ? null : String(columns.department.value),
          employee_fullName:
            (columns.employee?.value as { fullName?: string } | undefined)?.fullName ?? null,
          employee_jobTitle:
            (columns.employee?.value as { jobTitle?: string } | undefined)?.jobTitle ?? null,
          hireDate: columns.hireDate?.value ?? null,
          rating: columns.rating ? JSON.stringify(columns.rating.value) : null,
          remote: columns.remote?.value ?? null,
          salary: amount(columns.salary?.value),
        });
      }
    }
    // The JSON text carries the stored decimal text itself.
    const one = await get(`/Employees('${USD_IDS[0]}')`);
    expect(one.text).toContain('"basePay":101000.50,');
    expect(one.json['@odata.context']).toBe(`${server.url}${FEED}/$metadata#Employees/$entity`);
    const eva = await get(`/Employees('${EUR_EMPLOYEE}')?$select=salary,basePay`);
    expect(eva.text).toBe(
      `{"@odata.context":"${server.url}${FEED}/$metadata#Employees(salary,basePay)/$entity","basePay":70000.00,"salary":1.10}`,
    );
  });

  it('serves merit cycles (REST fields and currency), a cycle by key, its employees and exchange rates', async () => {
    const cycles = await get('/MeritCycles');
    expect(cycles.json.value).toEqual([
      {
        id: FEED_CYCLE.eur,
        name: 'Feed Mid-Year',
        startDate: '2025-06-01T00:00:00.000Z',
        endDate: '2025-07-31T23:59:59.999Z',
        createdDate: '2025-05-01T00:00:00.000Z',
        status: 'inactive',
        currency: 'EUR',
      },
      {
        id: FEED_CYCLE.usd,
        name: 'Feed 2025',
        startDate: '2025-01-01T00:00:00.000Z',
        endDate: '2025-03-31T23:59:59.999Z',
        createdDate: '2024-11-15T09:30:00.000Z',
        status: 'active',
        currency: 'USD',
      },
    ]);
    const one = await get(`/MeritCycles('${FEED_CYCLE.usd}')`);
    expect(one.json).toEqual({
      '@odata.context': `${server.url}${FEED}/$metadata#MeritCycles/$entity`,
      ...cycles.json.value[1],
    });
    const byName = await get(`/MeritCycles(id='${FEED_CYCLE.usd}')?$select=name`);
    expect(byName.json.name).toBe('Feed 2025');
    const employees = await get(`/MeritCycles('${FEED_CYCLE.usd}')/Employees?$select=id`);
    expect(ids(employees.json.value)).toEqual([...USD_IDS].sort());
    const rates = await get(`/MeritCycles('${FEED_CYCLE.eur}')/ExchangeRates`);
    expect(rates.json.value).toEqual([
      { meritCycleId: FEED_CYCLE.eur, base: 'EUR', currency: 'USD', rate: 1.09 },
    ]);
    const all = await get('/ExchangeRates?$filter=rate gt 1&$select=currency,rate');
    expect(all.json.value).toEqual([
      { currency: 'JPY', rate: 151.3 },
      { currency: 'USD', rate: 1.09 },
    ]);
  });

  // Each filter and the employees it must select, computed from the data set.
  const usd = (pick: (i: number) => boolean) => USD_IDS.filter((id) => pick(n(id)));
  const FILTERS: [string, string[]][] = [
    ["lastName eq 'Lee'", usd((i) => i === 6 || i === 7)],
    ["lastName eq 'O''Brien'", usd((i) => i === 2)],
    ["lastName ne 'Lee'", [...usd((i) => i !== 6 && i !== 7), EUR_EMPLOYEE]],
    ["lastName gt 'Lovelace'", usd((i) => i === 2 || i === 4 || i === 5)],
    ['basePay gt 104000.5', usd((i) => i > 4)],
    ['basePay ge 104000.5', usd((i) => i >= 4)],
    ['basePay lt 101000.51', [...usd((i) => i === 1), EUR_EMPLOYEE]],
    ['basePay le 70000', [EUR_EMPLOYEE]],
    ['compaRatio eq null', [...usd((i) => i === 3), EUR_EMPLOYEE]],
    ['compaRatio ne null', usd((i) => i !== 3)],
    // OData's two-valued logic: ne is true where the value is null.
    ['compaRatio ne 0.92', [...usd((i) => i !== 2), EUR_EMPLOYEE]],
    ['not (compaRatio gt 0.94)', [...usd((i) => i <= 4), EUR_EMPLOYEE]],
    ['hireDate ge 2015-01-01', usd((i) => i >= 5)],
    ['hireDate lt 2013-04-15', usd((i) => i < 3)],
    ['remote eq true', usd((i) => i % 2 === 1)],
    ['remote', usd((i) => i % 2 === 1)],
    ['remote eq false', usd((i) => i % 2 === 0)],
    ['not remote', [...usd((i) => i % 2 === 0), EUR_EMPLOYEE]],
    ["department eq 'Sales & Ops'", usd((i) => i % 2 === 1)],
    ["department eq '42'", [EUR_EMPLOYEE]],
    ["contains(department,'&')", usd((i) => i % 2 === 1)],
    ["startswith(email,'person1')", usd((i) => i === 1)],
    ["contains(employee_jobTitle,'gine')", usd((i) => i % 2 === 0)],
    ["employee_fullName eq 'Zoë Zimmer'", usd((i) => i === 4)],
    ['bonus__ eq 5', USD_IDS],
    ['rating eq \'{"stars":2}\'', usd((i) => i % 5 === 2)],
    [
      "eligibilityStatus eq 'ineligible' or currencyCode eq 'EUR'",
      [...usd((i) => i % 4 === 0 || i % 3 === 0), EUR_EMPLOYEE],
    ],
    [
      "(remote eq true or basePay gt 106000) and not startswith(lastName,'L')",
      usd((i) => (i % 2 === 1 || i > 5) && i !== 1 && i !== 6 && i !== 7),
    ],
    [`meritCycleId eq '${FEED_CYCLE.eur}'`, [EUR_EMPLOYEE]],
    ['preferredName eq null', [...usd((i) => i % 2 === 1), EUR_EMPLOYEE]],
    ['salary gt 1', [EUR_EMPLOYEE]],
  ];

  it.each(FILTERS)(
    '$filter=%s selects exactly the employees it states',
    async (filter, expected) => {
      const response = await get(`/Employees?$filter=${encodeURIComponent(filter)}&$count=true`);
      expect(response.status, response.text).toBe(200);
      expect(ids(response.json.value)).toEqual([...expected].sort());
      expect(response.json['@odata.count']).toBe(expected.length);
      const count = await get(`/Employees/$count?$filter=${encodeURIComponent(filter)}`);
      expect(count.text).toBe(String(expected.length));
    },
  );

  it('filters merit cycles on instants and strings', async () => {
    const after = await get('/MeritCycles?$filter=startDate gt 2025-03-01T00:00:00Z&$select=id');
    expect(after.json.value).toEqual([{ id: FEED_CYCLE.eur }]);
    const status = await get(
      "/MeritCycles?$filter=status eq 'active' and currency eq 'USD'&$select=id",
    );
    expect(status.json.value).toEqual([{ id: FEED_CYCLE.usd }]);
  });

  it('selects properties, counts, tops, skips and orders by id or the native order, both ways', async () => {
    const select = await get('/Employees?$select=lastName,id&$top=2');
    expect(select.json['@odata.context']).toBe(
      `${server.url}${FEED}/$metadata#Employees(lastName,id)`,
    );
    expect(Object.keys(select.json.value[0])).toEqual(['id', 'lastName']);
    const native = (await walk(server, '/Employees?$select=id', key)).entities.map((e) => e.id);
    const reversed = await get('/Employees?$select=id&$orderby=meritCycleId desc,lastName desc');
    expect(reversed.json.value.map((e: Entity) => e.id)).toEqual([...native].reverse());
    const byId = await get('/Employees?$select=id&$orderby=id');
    expect(byId.json.value.map((e: Entity) => e.id)).toEqual([...native].sort());
    const byIdDesc = await get('/Employees?$select=id&$orderby=id desc&$skip=1&$top=3&$count=true');
    expect(byIdDesc.json.value.map((e: Entity) => e.id)).toEqual(
      [...native].sort().reverse().slice(1, 4),
    );
    expect(byIdDesc.json['@odata.count']).toBe(native.length);
    expect(byIdDesc.json['@odata.nextLink']).toBeUndefined();
    const count = await get('/Employees/$count');
    expect(count.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(count.text).toBe(String(ALL_EMPLOYEES.length));
    const cycleCount = await get(`/MeritCycles('${FEED_CYCLE.usd}')/Employees/$count`);
    expect(cycleCount.text).toBe(String(USD_IDS.length));
    const none = await get('/Employees?$top=0&$count=true');
    expect(none.json.value).toEqual([]);
    expect(none.json['@odata.count']).toBe(ALL_EMPLOYEES.length);
  });

  it('pages with a signed $skiptoken: Prefer odata.maxpagesize answered with Preference-Applied, every entity once', async () => {
    const first = await get('/Employees?$select=id', { prefer: 'odata.maxpagesize=3' });
    expect(first.headers.get('preference-applied')).toBe('odata.maxpagesize=3');
    expect(first.json.value).toHaveLength(3);
    const link = new URL(first.json['@odata.nextLink']);
    expect(link.pathname).toBe(`${FEED}/Employees`);
    expect(link.searchParams.get('$select')).toBe('id');
    expect(link.searchParams.get('$skiptoken')).toMatch(/^[\w-]+\.[\w-]+$/);
    const walked = await walk(server, '/Employees?$select=id', key, {
      prefer: 'odata.maxpagesize=3',
    });
    expect(walked.pages).toEqual([3, 3, 2]);
    expect(walked.entities.map((e) => e.id)).toEqual(
      (await get('/Employees?$select=id')).json.value.map((e: Entity) => e.id),
    );
    // A cycle's employees in pages of 2, and the whole set in reverse in pages of 3: the
    // order REST serves, and its reverse.
    const restOrder = (
      await walkPages<Employee>(server, key, employeesPath(FEED_CYCLE.usd), { limit: 100 })
    ).items.map((e) => e.id);
    const navigation = await walk(
      server,
      `/MeritCycles('${FEED_CYCLE.usd}')/Employees?$select=id`,
      key,
      {
        prefer: 'odata.maxpagesize=2',
      },
    );
    expect(navigation.pages).toEqual([2, 2, 2, 1]);
    expect(navigation.entities.map((e) => e.id)).toEqual(restOrder);
    const backwards = await walk(server, '/Employees?$select=id&$orderby=meritCycleId desc', key, {
      prefer: 'odata.maxpagesize=3',
    });
    expect(backwards.entities.map((e) => e.id)).toEqual(walked.entities.map((e) => e.id).reverse());
    const rates = await walk(server, '/ExchangeRates', key, { prefer: 'odata.maxpagesize=1' });
    expect(rates.entities.map((r) => `${r.meritCycleId}/${r.currency}`)).toEqual([
      `${FEED_CYCLE.usd}/EUR`,
      `${FEED_CYCLE.usd}/GBP`,
      `${FEED_CYCLE.usd}/JPY`,
      `${FEED_CYCLE.eur}/USD`,
    ]);
    // $top spans pages: 5 of 8 in pages of 2.
    const topped = await walk(server, "/Employees?$select=id&$top=5&$filter=lastName ne 'x'", key, {
      prefer: 'odata.maxpagesize=2',
    });
    expect(topped.pages).toEqual([2, 2, 1]);
    // A filter and an order stay with the walk.
    const filtered = await walk(
      server,
      '/Employees?$select=id&$orderby=id desc&$filter=remote',
      key,
      {
        prefer: 'odata.maxpagesize=1',
      },
    );
    expect(filtered.entities.map((e) => e.id)).toEqual(
      usd((i) => i % 2 === 1)
        .sort()
        .reverse(),
    );
  });

  it('refuses what it does not serve with 501 and the OData error body, never ignoring it', async () => {
    for (const path of [
      '/Employees?$expand=x',
      '/MeritCycles?$expand=Employees',
      '/Employees?$search=ada',
      '/Employees?$apply=groupby((lastName))',
      '/Employees?$compute=basePay as x',
      "/Employees?$filter=indexof(lastName,'e') eq 1",
      '/Employees?$filter=contains(lastName,firstName)',
      '/Employees?$filter=lastName eq firstName',
      '/Employees?$filter=basePay add 1 gt 2',
      '/Employees?$orderby=tolower(lastName)',
      '/Employees?@p=1',
      '/Employees?custom=1',
      '/Employees?$select=employee/fullName',
      '/$batch',
      "/Employees('x')/email/$value",
      `/MeritCycles('${FEED_CYCLE.usd}')/name`,
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(501);
      expect(response.headers.get('odata-version')).toBe('4.0');
      expect(response.json, path).toEqual({ error: { code: '501', message: expect.any(String) } });
    }
  });

  it('answers bad input with a clear 400 and serves nothing', async () => {
    const first = await get('/Employees?$select=id', { prefer: 'odata.maxpagesize=2' });
    const token = new URL(first.json['@odata.nextLink']).searchParams.get('$skiptoken') as string;
    const tampered = withCharacterChanged(token, 10);
    const cases: [string, RegExp][] = [
      ['/Employees?$filter=lastName eq', /\$filter is not valid OData syntax/],
      ["/Employees?$filter=nosuch eq 'x'", /Employee has no property nosuch/],
      ['/Employees?$select=id,nosuch', /Employee has no property nosuch/],
      ["/Employees?$filter=basePay gt 'x'", /'x' is not a valid Edm.Decimal literal for basePay/],
      ['/Employees?$filter=hireDate eq 2025-02-30', /not a valid Edm.Date literal/],
      ["/Employees?$filter=remote eq 'yes'", /not a valid Edm.Boolean literal/],
      ["/Employees?$filter=contains(basePay,'1')", /contains takes a string property/],
      ['/Employees?$filter=lastName', /lastName is not a Boolean property/],
      ['/Employees?$top=-1', /\$top must be a non-negative integer/],
      ['/Employees?$skip=x', /\$skip is not valid OData syntax/],
      ['/Employees?$top=1&$top=2', /\$top may be given only once/],
      ['/Employees?$nosuch=1', /\$nosuch is not an OData system query option/],
      [
        `/Employees?$select=id&$skiptoken=${encodeURIComponent(tampered)}`,
        /\$skiptoken is not valid/,
      ],
      [`/Employees?$select=email&$skiptoken=${encodeURIComponent(token)}`, /other options/],
      [`/MeritCycles?$skiptoken=${encodeURIComponent(token)}`, /\$skiptoken is not valid/],
      [
        `/Employees?$select=id&$top=1&$skiptoken=${encodeURIComponent(token)}`,
        /follow @odata.nextLink/,
      ],
      ['/MeritCycles(5)', /the key is an id, a string in quotes/],
      ["/MeritCycles('a'", /not valid OData syntax/],
      ['/Employees?$filter=%E0%A4%A', /malformed percent-encoding/],
      ["/Employees('x')?$top=1", /\$top does not apply to a single entity/],
    ];
    for (const [path, message] of cases) {
      const response = await get(path);
      expect(response.status, path).toBe(400);
      expect(response.json.error.code).toBe('400');
      expect(response.json.error.message, path).toMatch(message);
      expect(response.text).not.toContain('mce_');
    }
    for (const path of ['/Employees?$format=atom', '/Employees?$format=xml', '/?$format=xml']) {
      const format = await get(path);
      expect(format.status, path).toBe(406);
      expect(format.json.error.code).toBe('406');
    }
    const xml = await get('/$metadata?$format=xml', { accept: 'application/json' });
    expect(xml.headers.get('content-type')).toBe('application/xml; charset=utf-8');
  });

  it('answers 404 in the OData form for an unknown resource, a cycle or employee nobody has', async () => {
    const missing = 'mc_00000000-0000-4000-8000-000000000000';
    for (const [path, message] of [
      ['/Nothing', /no resource Nothing/],
      [`/MeritCycles('${missing}')`, /^Merit cycle not found$/],
      [`/MeritCycles('${missing}')/Employees`, /^Merit cycle not found$/],
      [`/MeritCycles('not-an-id')/ExchangeRates`, /^Merit cycle not found$/],
      ["/Employees('mce_00000000-0000-4000-8000-000000000000')", /^Employee not found$/],
      ["/Employees('x')", /^Employee not found$/],
    ] as const) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('odata-version')).toBe('4.0');
      expect(response.json.error.message, path).toMatch(message);
    }
  });

  it('refuses an OData-MaxVersion below 4.0 with 400, and serves 4.0 and 4.01 clients', async () => {
    const old = await get('/Employees', { 'odata-maxversion': '3.0' });
    expect(old.status).toBe(400);
    expect(old.json.error.message).toMatch(/OData-MaxVersion 3\.0/);
    for (const version of ['4.0', '4.01']) {
      const response = await get('/$metadata', { 'odata-maxversion': version });
      expect(response.status).toBe(200);
    }
    const post = await fetch(`${server.url}${FEED}/Employees`, {
      method: 'POST',
      headers: { 'x-api-key': key },
    });
    expect(post.status).toBe(405);
    expect(await post.json()).toEqual({ error: { code: '405', message: expect.any(String) } });
  });

  it('authenticates with HTTP Basic (the key as password) and answers 401 with the challenge and the OData body', async () => {
    const basic = await feed(server, '/Employees/$count', { basic: key });
    expect(basic.status).toBe(200);
    for (const options of [{}, { basic: 'not-a-key' }, { key: withWrongChecksum(key) }]) {
      const response = await feed(server, '/$metadata', options);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="compplan"');
      expect(response.headers.get('odata-version')).toBe('4.0');
      expect(response.json).toEqual({
        error: { code: '401', message: 'Missing or invalid API key' },
      });
    }
  });
});

describe('the OData feed on a cycle of more than one page', () => {
  let server: TestServer;
  let key: string;
  const COUNT = 2_003;

  beforeAll(async () => {
    const big = feedDataSet();
    const cycle = big.meritCycles[0] as (typeof big.meritCycles)[number];
    cycle.employees = Array.from({ length: COUNT }, (_, i) => ({
      id: `mce_70000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      email: `walker${i}@feedco.example`,
      firstName: ['Alex', 'Sam', 'Émile'][i % 3] as string,
      lastName: ['Smith', "O'Brien", 'Åberg', 'smith'][i % 4] as string,
      currencyCode: 'USD',
      eligibilityStatus: 'eligible' as const,
      columns: { basePay: { name: 'Base pay', type: 'currency', value: { USD: `${i}.00` } } },
    }));
    server = await startTestServer({ dataSets: [big] });
    key = await server.createKey(FEEDCO);
  });
  afterAll(() => server.close());

  it('serves 1,000 entities a page by default and every employee exactly once', async () => {
    const { entities, pages } = await walk(server, '/Employees?$select=id,basePay', key);
    expect(pages).toEqual([1_000, 1_000, COUNT + 1 - 2_000]);
    expect(new Set(entities.map((e) => e.id)).size).toBe(COUNT + 1);
    const more = await get(server, key, '/Employees?$select=id', {
      prefer: 'odata.maxpagesize=9000',
    });
    // A larger page than the default is not granted, nor said to be.
    expect(more.json.value).toHaveLength(1_000);
    expect(more.headers.get('preference-applied')).toBeNull();
  });
});

const get = (server: TestServer, key: string, path: string, headers: Record<string, string>) =>
  feed(server, path, { key, headers });

describe('an OData walk while an import changes the data', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet()] });
    key = await server.createKey(FEEDCO);
  });
  afterAll(() => server.close());

  it('sees every employee that existed unchanged for the whole walk exactly once', async () => {
    const before = ALL_EMPLOYEES.map(({ employee }) => employee.id as string);
    const seen: string[] = [];
    let url: string | undefined = `${server.url}${FEED}/Employees?$select=id`;
    let page = 0;
    while (url) {
      const response = await fetch(url, {
        headers: { 'x-api-key': key, prefer: 'odata.maxpagesize=2' },
      });
      const body = (await response.json()) as {
        value: { id: string }[];
        '@odata.nextLink'?: string;
      };
      seen.push(...body.value.map((e) => e.id));
      url = body['@odata.nextLink'];
      if (++page === 2) {
        // Between pages: employees added before and after the walk's position, and one
        // moved behind it by a new last name.
        const changed = feedDataSet();
        const cycle = changed.meritCycles[0] as (typeof changed.meritCycles)[number];
        const employees = cycle.employees ?? [];
        const template = employees[0] as (typeof employees)[number];
        employees.push(
          {
            ...template,
            id: 'mce_60000000-0000-4000-8000-200000000001',
            email: 'a@x.example',
            lastName: 'Aaa',
          },
          {
            ...template,
            id: 'mce_60000000-0000-4000-8000-200000000002',
            email: 'z@x.example',
            lastName: 'Zzz',
          },
        );
        const moved = employees.find((e) => e.id === USD_IDS[6]) as (typeof employees)[number];
        moved.lastName = 'Aardvark';
        await server.load(changed);
      }
    }
    const unchanged = before.filter((id) => id !== USD_IDS[6]);
    for (const id of unchanged)
      expect(
        seen.filter((s) => s === id),
        id,
      ).toHaveLength(1);
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe('the OData feed behind a TLS proxy (TRUST_PROXY)', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet()], trustProxy: ['127.0.0.1'] });
    key = await server.createKey(FEEDCO);
  });
  afterAll(() => server.close());

  it('writes context and next links with the scheme and host the client used', async () => {
    const response = await feed(server, '/Employees?$select=id', {
      key,
      headers: {
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'compplan.example.com',
        prefer: 'odata.maxpagesize=2',
      },
    });
    expect(response.json['@odata.context']).toBe(
      'https://compplan.example.com/odata/v4/$metadata#Employees(id)',
    );
    expect(response.json['@odata.nextLink']).toMatch(
      /^https:\/\/compplan\.example\.com\/odata\/v4\/Employees\?\$select=id&\$skiptoken=/,
    );
  });
});
