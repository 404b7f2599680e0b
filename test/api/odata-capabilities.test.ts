// What $metadata declares the feed does (Org.OData.Capabilities.V1, docs/odata.md,
// "Capabilities"), over real HTTP on every database: the annotations in CSDL XML and JSON,
// each declared capability used and working, each undeclared one refused (501, or 405 for
// a write); and IEEE754Compatible=true (decimals and counts as exact strings).
import { describe, expect, it } from 'vitest';
import { FOLD_CYCLE, FOLDCO, foldDataSet } from '../fixtures/odata-folding-data-set.js';
import { FEED, feedTestServer } from '../helpers/feed.js';

const SERVED_FUNCTIONS = [
  'contains',
  'startswith',
  'endswith',
  'tolower',
  'toupper',
  'trim',
  'length',
  'year',
  'month',
  'day',
];

// Each function of OData 4.01 the feed does not declare, used as a client would.
const UNDECLARED_FUNCTIONS = [
  "indexof(lastName,'a') eq 1",
  "substring(lastName,1) eq 'a'",
  "concat(lastName,firstName) eq 'a'",
  "matchesPattern(lastName,'^A')",
  'hour(hireDate) eq 1',
  'minute(hireDate) eq 1',
  'second(hireDate) eq 1',
  'fractionalseconds(hireDate) eq 0',
  'totalseconds(hireDate) eq 0',
  'date(hireDate) eq 2020-01-01',
  'time(hireDate) eq 10:00:00',
  'totaloffsetminutes(hireDate) eq 0',
  'mindatetime() eq hireDate',
  'maxdatetime() eq hireDate',
  'now() gt hireDate',
  'round(ratio) eq 1',
  'floor(ratio) eq 1',
  'ceiling(ratio) eq 1',
  'geo.distance(lastName,firstName) lt 1',
  'geo.length(lastName) lt 1',
  'geo.intersects(lastName,firstName)',
  'hassubset(lastName,firstName)',
  'hassubsequence(lastName,firstName)',
  "cast(ratio,Edm.String) eq '1'",
  'isof(ratio,Edm.Decimal)',
];

const feedServer = feedTestServer(() => [foldDataSet()], FOLDCO);
const { get } = feedServer;

describe('$metadata declares what the feed does, and it does exactly that', () => {
  it('annotates the container and each entity set in CSDL XML', async () => {
    const xml = (await get('/$metadata')).text;
    expect(xml).toContain(
      '<edmx:Reference Uri="https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.xml"><edmx:Include Namespace="Org.OData.Capabilities.V1" Alias="Capabilities"/></edmx:Reference>',
    );
    const functions = `<Annotation Term="Capabilities.FilterFunctions"><Collection>${SERVED_FUNCTIONS.map((f) => `<String>${f}</String>`).join('')}</Collection></Annotation>`;
    expect(xml).toContain(
      `${functions}<Annotation Term="Capabilities.BatchSupported" Bool="false"/><Annotation Term="Capabilities.CrossJoinSupported" Bool="false"/></EntityContainer>`,
    );
    const setAnnotations = (byKey: boolean) =>
      `${functions}<Annotation Term="Capabilities.FilterRestrictions"><Record><PropertyValue Property="Filterable" Bool="true"/></Record></Annotation><Annotation Term="Capabilities.SortRestrictions"><Record><PropertyValue Property="Sortable" Bool="true"/></Record></Annotation><Annotation Term="Capabilities.TopSupported" Bool="true"/><Annotation Term="Capabilities.SkipSupported" Bool="true"/><Annotation Term="Capabilities.CountRestrictions"><Record><PropertyValue Property="Countable" Bool="true"/></Record></Annotation><Annotation Term="Capabilities.SelectSupport"><Record><PropertyValue Property="Supported" Bool="true"/></Record></Annotation><Annotation Term="Capabilities.ExpandRestrictions"><Record><PropertyValue Property="Expandable" Bool="false"/></Record></Annotation><Annotation Term="Capabilities.SearchRestrictions"><Record><PropertyValue Property="Searchable" Bool="false"/></Record></Annotation><Annotation Term="Capabilities.IndexableByKey" Bool="${byKey}"/><Annotation Term="Capabilities.InsertRestrictions"><Record><PropertyValue Property="Insertable" Bool="false"/></Record></Annotation><Annotation Term="Capabilities.UpdateRestrictions"><Record><PropertyValue Property="Updatable" Bool="false"/></Record></Annotation><Annotation Term="Capabilities.DeleteRestrictions"><Record><PropertyValue Property="Deletable" Bool="false"/></Record></Annotation></EntitySet>`;
    expect(xml).toContain(
      `<EntitySet Name="Employees" EntityType="Compplan.Employee">${setAnnotations(true)}`,
    );
    expect(xml).toContain(
      `<NavigationPropertyBinding Path="ExchangeRates" Target="ExchangeRates"/>${setAnnotations(true)}`,
    );
    expect(xml).toContain(
      `<EntitySet Name="ExchangeRates" EntityType="Compplan.ExchangeRate">${setAnnotations(false)}`,
    );
  });

  it('says the same in CSDL JSON', async () => {
    const json = (await get('/$metadata?$format=json')).json;
    expect(
      json.$Reference[
        'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.json'
      ],
    ).toEqual({ $Include: [{ $Namespace: 'Org.OData.Capabilities.V1', $Alias: 'Capabilities' }] });
    const container = json.Compplan.Container;
    expect(container['@Capabilities.FilterFunctions']).toEqual(SERVED_FUNCTIONS);
    expect(container['@Capabilities.BatchSupported']).toBe(false);
    expect(container['@Capabilities.CrossJoinSupported']).toBe(false);
    for (const set of ['MeritCycles', 'Employees', 'ExchangeRates']) {
      const annotations = Object.fromEntries(
        Object.entries(container[set]).filter(([name]) => name.startsWith('@')),
      );
      expect(annotations, set).toEqual({
        '@Capabilities.FilterFunctions': SERVED_FUNCTIONS,
        '@Capabilities.FilterRestrictions': { Filterable: true },
        '@Capabilities.SortRestrictions': { Sortable: true },
        '@Capabilities.TopSupported': true,
        '@Capabilities.SkipSupported': true,
        '@Capabilities.CountRestrictions': { Countable: true },
        '@Capabilities.SelectSupport': { Supported: true },
        '@Capabilities.ExpandRestrictions': { Expandable: false },
        '@Capabilities.SearchRestrictions': { Searchable: false },
        '@Capabilities.IndexableByKey': set !== 'ExchangeRates',
        '@Capabilities.InsertRestrictions': { Insertable: false },
        '@Capabilities.UpdateRestrictions': { Updatable: false },
        '@Capabilities.DeleteRestrictions': { Deletable: false },
      });
    }
  });

  it('serves every function it declares, on the properties it applies to', async () => {
    const json = (await get('/$metadata?$format=json')).json;
    const declared: string[] = json.Compplan.Container['@Capabilities.FilterFunctions'];
    const examples: Record<string, string> = {
      contains: "contains(lastName,'ann')",
      startswith: "startswith(lastName,'Mc')",
      endswith: "endswith(lastName,'röm')",
      tolower: "tolower(lastName) eq 'mcdonald'",
      toupper: "toupper(lastName) eq 'MCDONALD'",
      trim: "trim(dept) eq 'Sales'",
      length: 'length(lastName) eq 3',
      year: 'year(hireDate) eq 2010',
      month: 'month(hireDate) eq 1',
      day: 'day(hireDate) eq 1',
    };
    expect(Object.keys(examples)).toEqual(declared);
    for (const [name, filter] of Object.entries(examples)) {
      const response = await get(`/Employees?$filter=${encodeURIComponent(filter)}&$select=id`);
      expect(response.status, `${name}: ${response.text}`).toBe(200);
      expect(response.json.value.length, name).toBeGreaterThan(0);
    }
  });

  it('refuses every function it does not declare with 501', async () => {
    for (const filter of UNDECLARED_FUNCTIONS) {
      const response = await get(`/Employees?$filter=${encodeURIComponent(filter)}`);
      expect(response.status, `${filter}: ${response.text}`).toBe(501);
      expect(response.json.error.message).toMatch(/is not supported by this feed/);
    }
  });

  it('serves every option and resource it declares, and refuses those it declares it does not', async () => {
    const works = [
      '/Employees?$top=1',
      '/Employees?$skip=1',
      '/Employees?$count=true',
      '/Employees/$count',
      '/Employees?$orderby=ratio desc',
      '/Employees?$filter=remote',
      '/Employees?$select=id',
      `/MeritCycles('${FOLD_CYCLE.usd}')`,
      '/ExchangeRates?$top=1&$skip=1&$count=true&$orderby=rate&$filter=rate gt 1&$select=rate',
      '/MeritCycles?$top=1&$skip=1&$count=true&$orderby=name&$filter=year(startDate) eq 2025&$select=id',
    ];
    for (const path of works) {
      const response = await get(path.replaceAll(' ', '%20'));
      expect(response.status, `${path}: ${response.text}`).toBe(200);
    }
    const refused: [string, number][] = [
      ['/Employees?$expand=x', 501],
      ['/MeritCycles?$expand=Employees', 501],
      ['/Employees?$search=ada', 501],
      ['/$batch', 501],
      ['/$crossjoin(Employees,MeritCycles)', 501],
      [`/ExchangeRates(meritCycleId='${FOLD_CYCLE.usd}',currency='EUR')`, 501],
    ];
    for (const [path, status] of refused) {
      const response = await get(path);
      expect(response.status, path).toBe(status);
      expect(response.json.error.code).toBe(String(status));
    }
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) {
      const response = await fetch(`${feedServer.server.url}${FEED}/Employees`, {
        method,
        headers: { 'x-api-key': feedServer.key, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(response.status, method).toBe(405);
    }
  });
});

describe('IEEE754Compatible=true', () => {
  const first = `/Employees('mce_70000000-0000-4000-8000-000000000002')?$select=id,basePay,ratio`;
  const contentType = (ieee: boolean) =>
    `application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=${ieee};charset=utf-8`;

  it('writes every decimal and the count as a string, exact at any length, and says so', async () => {
    for (const [path, headers] of [
      [first, { accept: 'application/json;odata.metadata=minimal;IEEE754Compatible=true' }],
      [`${first}&$format=${encodeURIComponent('application/json;IEEE754Compatible=true')}`, {}],
      [first, { accept: 'application/xml;q=0.5, application/json;IEEE754Compatible="TRUE"' }],
    ] as const) {
      const response = await get(path, headers);
      expect(response.status, response.text).toBe(200);
      expect(response.headers.get('content-type')).toBe(contentType(true));
      expect(response.text).toBe(
        `{"@odata.context":"${feedServer.server.url}${FEED}/$metadata#Employees(id,basePay,ratio)/$entity","id":"mce_70000000-0000-4000-8000-000000000002","basePay":"92500.00","ratio":"1.23456789012345678"}`,
      );
    }
    const big = await get('/Employees?$select=ratio&$filter=ratio gt 100&$count=true&$top=1', {
      accept: 'application/json;IEEE754Compatible=true',
    });
    expect(big.json).toEqual({
      '@odata.context': `${feedServer.server.url}${FEED}/$metadata#Employees(ratio)`,
      '@odata.count': '3',
      value: [{ ratio: '1000000000000000000000' }],
    });
    const rates = await get(`/MeritCycles('${FOLD_CYCLE.eur}')/ExchangeRates?$select=rate`, {
      accept: 'application/json;IEEE754Compatible=true',
    });
    expect(rates.json.value).toEqual([{ rate: '1.09' }]);
    const service = await get('/', { accept: 'application/json;IEEE754Compatible=true' });
    expect(service.headers.get('content-type')).toBe(contentType(true));
  });

  it('writes decimals as JSON numbers, digit for digit, without it or with false', async () => {
    for (const accept of [undefined, 'application/json;IEEE754Compatible=false', '*/*']) {
      const response = await get(first, accept === undefined ? undefined : { accept });
      expect(response.headers.get('content-type')).toBe(contentType(false));
      expect(response.text).toContain('"basePay":92500.00,"ratio":1.23456789012345678}');
    }
  });

  it('answers 400 for a value other than true or false, in Accept or $format', async () => {
    for (const [path, headers] of [
      [first, { accept: 'application/json;IEEE754Compatible=maybe' }],
      [`${first}&$format=${encodeURIComponent('application/json;IEEE754Compatible=maybe')}`, {}],
      ['/$metadata', { accept: 'application/json;IEEE754Compatible=maybe' }],
    ] as const) {
      const response = await get(path, headers);
      expect(response.status, path).toBe(400);
      expect(response.json).toEqual({
        error: { code: '400', message: 'IEEE754Compatible=maybe: it is true or false' },
      });
    }
  });
});
