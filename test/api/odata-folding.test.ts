// What BI tools fold into the OData feed (docs/odata.md, "$filter", "$orderby"), over real
// HTTP, on every database: the OData 4.01 URL forms (`contains(…) eq true`, `not(…)`, `+`
// for a space, integers beyond 64 bits), the functions and `in`, and $orderby on every
// property, both ways, walked page by page with $skiptoken: each answer exactly the one the
// data states, computed here from the entities the feed serves in its own order (decimals
// as IEEE754Compatible strings, so exact), by the rules docs/odata.md gives (nulls first
// ascending, strings by code point, ASCII-only case mapping).
import { beforeAll, describe, expect, it } from 'vitest';
import { byCodePoint } from '../../src/columns/order.js';
import { FOLD_CYCLE, FOLDCO, foldDataSet } from '../fixtures/odata-folding-data-set.js';
import { feedTestServer, walk } from '../helpers/feed.js';

type Entity = Record<string, unknown>;
const IEEE = { accept: 'application/json;IEEE754Compatible=true' };

/** Two decimal strings compared exactly (BigInt), as PostgreSQL's numeric does. */
function compareDecimals(a: string, b: string): number {
  const scale = (text: string) => text.split('.')[1]?.length ?? 0;
  const digits = Math.max(scale(a), scale(b));
  const big = (text: string) => {
    const [whole = '0', fraction = ''] = text.split('.');
    const negative = whole.startsWith('-');
    const magnitude = BigInt(whole.replace('-', '') + fraction.padEnd(digits, '0'));
    return negative ? -magnitude : magnitude;
  };
  const x = big(a);
  const y = big(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
const asciiUpper = (text: string) => text.replace(/[a-z]/g, (c) => c.toUpperCase());

describe('the OData feed folds what BI tools send', () => {
  const feedServer = feedTestServer(() => [foldDataSet()], FOLDCO);
  const { get } = feedServer;
  const walkAll = (path: string, headers: Record<string, string>) =>
    walk(feedServer.server, path, feedServer.key, headers);
  let employees: Entity[];
  let types: Record<string, string>;

  beforeAll(async () => {
    employees = (await walkAll('/Employees', IEEE)).entities;
    const metadata = await get('/$metadata?$format=json');
    const employee = metadata.json.Compplan.Employee as Record<string, { $Type?: string }>;
    types = Object.fromEntries(
      Object.entries(employee)
        .filter(([name]) => !name.startsWith('$'))
        .map(([name, property]) => [name, property.$Type ?? 'Edm.String']),
    );
  });
  const idsWhere = (pick: (e: Entity) => boolean) =>
    employees
      .filter(pick)
      .map((e) => e.id as string)
      .sort();
  const text = (e: Entity, name: string) => e[name] as string | null;

  it('reads every employee with decimals as exact strings', () => {
    expect(employees).toHaveLength(24);
    expect(employees.filter((e) => e.ratio === '1.23456789012345678')).toHaveLength(3);
    expect(employees.filter((e) => e.ratio === '1000000000000000000000')).toHaveLength(3);
  });

  // Each $filter, as a client writes it (unencoded here: encoded by the test), and the
  // employees it selects, from the data.
  const FILTERS: [string, (e: Entity) => boolean][] = [
    ["contains(lastName,'ann') eq true", (e) => text(e, 'lastName')?.includes('ann') === true],
    ["true eq contains(lastName,'ann')", (e) => text(e, 'lastName')?.includes('ann') === true],
    ["contains(lastName,'ann') eq false", (e) => !text(e, 'lastName')?.includes('ann')],
    ["contains(lastName,'ann') ne true", (e) => !text(e, 'lastName')?.includes('ann')],
    ["startswith(lastName,'Mc') eq true", (e) => text(e, 'lastName')?.startsWith('Mc') === true],
    ["false eq startswith(lastName,'Mc')", (e) => !text(e, 'lastName')?.startsWith('Mc')],
    ["endswith(lastName,'röm')", (e) => text(e, 'lastName')?.endsWith('röm') === true],
    ["endswith(lastName,'ÖM')", () => false],
    ["endswith(dept,'Sales ')", (e) => text(e, 'dept')?.endsWith('Sales ') === true],
    ['not(remote)', (e) => e.remote !== true],
    ['not(remote eq true)', (e) => e.remote !== true],
    ["not(contains(lastName,'a'))", (e) => !text(e, 'lastName')?.includes('a')],
    [
      "remote eq true and not(startswith(firstName,'A'))",
      (e) => e.remote === true && !text(e, 'firstName')?.startsWith('A'),
    ],
    // ASCII letters only, on both databases: É, Ä and ß keep their case.
    [
      "tolower(lastName) eq 'mcdonald'",
      (e) => asciiLower(text(e, 'lastName') ?? '') === 'mcdonald',
    ],
    [
      "tolower(lastName) eq 'Ängström'",
      (e) => asciiLower(text(e, 'lastName') ?? '') === 'Ängström',
    ],
    ["toupper(lastName) eq 'STRAßE'", (e) => asciiUpper(text(e, 'lastName') ?? '') === 'STRAßE'],
    ["toupper(firstName) eq 'éMILE'", (e) => asciiUpper(text(e, 'firstName') ?? '') === 'éMILE'],
    ["toupper(firstName) eq 'ÉMILE'", (e) => asciiUpper(text(e, 'firstName') ?? '') === 'ÉMILE'],
    [
      "contains(tolower(lastName),'mcd')",
      (e) => asciiLower(text(e, 'lastName') ?? '').includes('mcd'),
    ],
    [
      "startswith(toupper(lastName),'ÄN')",
      (e) => asciiUpper(text(e, 'lastName') ?? '').startsWith('ÄN'),
    ],
    [
      "startswith(toupper(lastName),'Än')",
      (e) => asciiUpper(text(e, 'lastName') ?? '').startsWith('Än'),
    ],
    // trim removes spaces; length counts code points.
    ["trim(dept) eq 'Sales'", (e) => text(e, 'dept')?.trim() === 'Sales'],
    ["dept eq 'Sales'", (e) => text(e, 'dept') === 'Sales'],
    ['length(lastName) eq 8', (e) => [...(text(e, 'lastName') ?? '')].length === 8],
    ['length(dept) gt 4', (e) => [...(text(e, 'dept') ?? '')].length > 4],
    ['length(trim(dept)) eq 5', (e) => [...(text(e, 'dept')?.trim() ?? '')].length === 5],
    ['year(hireDate) eq 2015', (e) => text(e, 'hireDate')?.slice(0, 4) === '2015'],
    ['year(hireDate) ge 2018', (e) => Number(text(e, 'hireDate')?.slice(0, 4) ?? 0) >= 2018],
    ['month(hireDate) eq 3', (e) => text(e, 'hireDate')?.slice(5, 7) === '03'],
    ['day(hireDate) lt 10', (e) => Number(text(e, 'hireDate')?.slice(8, 10) ?? 99) < 10],
    ['year(hireDate) eq null', (e) => e.hireDate === null],
    // in, with and without null.
    ["dept in ('Sales','Eng')", (e) => e.dept === 'Sales' || e.dept === 'Eng'],
    ["dept in ('R+D',null)", (e) => e.dept === 'R+D' || e.dept === null],
    ["lastName in ('Lee','Zoë','nobody')", (e) => e.lastName === 'Lee' || e.lastName === 'Zoë'],
    ['basePay in (90000.50,95000.00)', (e) => e.basePay === '90000.50' || e.basePay === '95000.00'],
    [
      'hireDate in (2010-01-01,2015-06-08)',
      (e) => e.hireDate === '2010-01-01' || e.hireDate === '2015-06-08',
    ],
    ['not (ratio in (0.95))', (e) => e.ratio !== '0.95'],
    [`meritCycleId in ('${FOLD_CYCLE.eur}')`, (e) => e.meritCycleId === FOLD_CYCLE.eur],
    // Integers beyond 64 bits are decimals, compared exactly.
    ['ratio eq 1000000000000000000000', (e) => e.ratio === '1000000000000000000000'],
    [
      'ratio lt 1000000000000000000000',
      (e) => e.ratio !== null && compareDecimals(e.ratio as string, '1000000000000000000000') < 0,
    ],
    ['ratio ge 99999999999999999999999', () => false],
    ['ratio gt -100000000000000000000000', (e) => e.ratio !== null],
    ['length(lastName) lt 100000000000000000000', () => true],
    // Exact on both databases: these differ from stored values beyond a double's digits.
    ['ratio eq 1000000000000000000001', () => false],
    ['ratio lt 1000000000000000000001', (e) => e.ratio !== null],
    [
      'ratio ge 1.234567890123456781',
      (e) => e.ratio !== null && compareDecimals(e.ratio as string, '1.234567890123456781') >= 0,
    ],
    ['ratio eq 1.23456789012345678', (e) => e.ratio === '1.23456789012345678'],
    ['ratio eq 1.2345678901234568', () => false],
    ['ratio in (1.2345678901234568,12.0)', (e) => e.ratio === '12'],
    ['basePay eq 90000.5', (e) => e.basePay === '90000.50'],
    ['basePay ne 90000.500', (e) => e.basePay !== '90000.50'],
  ];

  it.each(FILTERS)('$filter=%s selects exactly the employees it states', async (filter, pick) => {
    const response = await get(`/Employees?$filter=${encodeURIComponent(filter)}&$select=id`);
    expect(response.status, response.text).toBe(200);
    const got = (response.json.value as Entity[]).map((e) => e.id as string).sort();
    expect(got).toEqual(idsWhere(pick));
  });

  it('reads + as a space in query option values, as form decoding does, and %2B as a plus', async () => {
    const remote = await get('/Employees?$filter=remote+eq+true&$select=id');
    expect(remote.status, remote.text).toBe(200);
    expect(remote.json.value.map((e: Entity) => e.id).sort()).toEqual(
      idsWhere((e) => e.remote === true),
    );
    const plus = await get("/Employees?$filter=dept+eq+'R%2BD'&$select=id,dept");
    expect(plus.json.value.map((e: Entity) => e.id).sort()).toEqual(
      idsWhere((e) => e.dept === 'R+D'),
    );
    // An unencoded plus in a literal is a space: 'R D', which nobody has.
    const space = await get("/Employees?$filter=dept+eq+'R+D'&$select=id");
    expect(space.json.value).toEqual([]);
    const orderby = await get('/Employees?$orderby=lastName+desc,id&$select=id&$top=1');
    expect(orderby.status).toBe(200);
    expect(orderby.json.value).toEqual([
      {
        id: [...employees].sort(
          (a, b) =>
            byCodePoint(b.lastName as string, a.lastName as string) ||
            byCodePoint(a.id as string, b.id as string),
        )[0]?.id,
      },
    ]);
    // The next link writes the option back encoded, so the walk goes on with the same query.
    const walked = await walkAll('/Employees?$filter=remote+eq+true&$select=id', {
      prefer: 'odata.maxpagesize=2',
    });
    expect(walked.entities.map((e) => e.id).sort()).toEqual(idsWhere((e) => e.remote === true));
  });

  /**
   * The order the feed must serve: by `keys`, then the set's own order (reversed when the
   * keys are a prefix of it, all reversed); nulls first ascending.
   */
  function expectedOrder(keys: { name: string; descending: boolean }[]): string[] {
    const own = ['meritCycleId', 'lastName', 'firstName', 'id'];
    const reversed = keys.every((key, index) => key.descending && own[index] === key.name);
    const native = own
      .filter((name) => !keys.some((key) => key.name === name))
      .map((name) => ({ name, descending: reversed }));
    const compare = (type: string, a: unknown, b: unknown): number => {
      if (a === null && b === null) return 0;
      if (a === null) return -1;
      if (b === null) return 1;
      if (type === 'Edm.Decimal') return compareDecimals(a as string, b as string);
      if (type === 'Edm.Boolean') return Number(a) - Number(b);
      return byCodePoint(String(a), String(b));
    };
    return [...employees]
      .sort((x, y) => {
        for (const { name, descending } of [...keys, ...native]) {
          const order = compare(types[name] as string, x[name] ?? null, y[name] ?? null);
          if (order !== 0) return descending ? -order : order;
        }
        return 0;
      })
      .map((e) => e.id as string);
  }

  it('orders by every property, both ways, and a walk by $skiptoken serves each employee once in that order', async () => {
    const names = Object.keys(types);
    expect(names).toEqual(
      expect.arrayContaining(['basePay', 'ratio', 'hireDate', 'remote', 'dept', 'preferredName']),
    );
    for (const name of names) {
      for (const descending of [false, true]) {
        const orderby = `${name}${descending ? ' desc' : ''}`;
        const { entities, pages } = await walkAll(
          `/Employees?$orderby=${encodeURIComponent(orderby)}&$select=id`,
          { prefer: 'odata.maxpagesize=5' },
        );
        expect(pages, orderby).toEqual([5, 5, 5, 5, 4]);
        expect(
          entities.map((e) => e.id),
          orderby,
        ).toEqual(expectedOrder([{ name, descending }]));
      }
    }
  });

  it('orders by several keys, asc and desc mixed, with $filter, $top and $count', async () => {
    for (const orderby of [
      'dept desc,basePay',
      'remote,ratio desc,id desc',
      'lastName asc,firstName desc',
      'hireDate desc,preferredName',
    ]) {
      const keys = orderby.split(',').map((item) => {
        const [name = '', direction] = item.split(' ');
        return { name, descending: direction === 'desc' };
      });
      const { entities } = await walkAll(
        `/Employees?$orderby=${encodeURIComponent(orderby)}&$select=id`,
        {
          prefer: 'odata.maxpagesize=3',
        },
      );
      expect(
        entities.map((e) => e.id),
        orderby,
      ).toEqual(expectedOrder(keys));
    }
    const top = await walkAll(
      '/Employees?$orderby=basePay desc&$top=7&$select=id&$filter=remote ne null&$count=true',
      {
        prefer: 'odata.maxpagesize=3',
      },
    );
    expect(top.pages).toEqual([3, 3, 1]);
    expect(top.entities.map((e) => e.id)).toEqual(
      expectedOrder([{ name: 'basePay', descending: true }])
        .filter((id) => employees.find((e) => e.id === id)?.remote !== null)
        .slice(0, 7),
    );
    const counted = await get(
      '/Employees?$orderby=basePay desc&$top=7&$filter=remote ne null&$count=true',
      IEEE,
    );
    expect(counted.json['@odata.count']).toBe(
      String(employees.filter((e) => e.remote !== null).length),
    );
  });

  it('orders merit cycles and exchange rates by any property, the cycle navigation too', async () => {
    const cycles = await get('/MeritCycles?$orderby=startDate desc&$select=id');
    expect(cycles.json.value).toEqual([{ id: FOLD_CYCLE.eur }, { id: FOLD_CYCLE.usd }]);
    const byName = await get('/MeritCycles?$orderby=name&$select=name');
    expect(byName.json.value).toEqual([{ name: 'Fold 2025' }, { name: 'Fold Mid-Year' }]);
    const rates = await walkAll('/ExchangeRates?$orderby=rate desc&$select=currency,rate', {
      prefer: 'odata.maxpagesize=1',
    });
    expect(rates.entities).toEqual([
      { currency: 'JPY', rate: 151.3 },
      { currency: 'USD', rate: 1.09 },
      { currency: 'EUR', rate: 0.92 },
      { currency: 'GBP', rate: 0.79 },
    ]);
    const years = await get(
      '/MeritCycles?$filter=year(startDate) eq 2026 and month(endDate) eq 7&$select=id',
    );
    expect(years.json.value).toEqual([{ id: FOLD_CYCLE.eur }]);
    const inCycle = await walkAll(
      `/MeritCycles('${FOLD_CYCLE.usd}')/Employees?$orderby=ratio desc,lastName&$select=id`,
      { prefer: 'odata.maxpagesize=4' },
    );
    expect(inCycle.entities.map((e) => e.id)).toEqual(
      expectedOrder([
        { name: 'ratio', descending: true },
        { name: 'lastName', descending: false },
      ]).filter((id) => employees.find((e) => e.id === id)?.meritCycleId === FOLD_CYCLE.usd),
    );
  });
});
