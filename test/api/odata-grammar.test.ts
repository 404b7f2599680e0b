// The feed's $filter/$orderby grammar (src/odata/grammar/query.peggy): the committed parser
// is the one peggy makes of it, and what it reads and refuses, over real HTTP on every
// database: bad input is a 4xx OData error, never a 500 and never an option ignored.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FOLDCO, foldDataSet } from '../fixtures/odata-folding-data-set.js';
import { feedTestServer } from '../helpers/feed.js';

describe('the feed grammar', () => {
  it('is committed as peggy generates it from query.peggy (npm run odata:grammar)', () => {
    const script = fileURLToPath(new URL('../../scripts/odata-grammar.js', import.meta.url));
    const check = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});

describe('the feed refuses bad $filter and $orderby with a 4xx OData error', () => {
  const { get } = feedTestServer(() => [foldDataSet()], FOLDCO);
  const filter = (text: string) => `/Employees?$filter=${encodeURIComponent(text)}`;
  const list = (count: number) => Array.from({ length: count }, (_, i) => String(i)).join(',');

  it('answers 400 naming the problem', async () => {
    const cases: [string, string][] = [
      [
        filter("contains(lastName,'a') eq"),
        "$filter is not valid OData syntax: contains(lastName,'a') eq (it ends too early)",
      ],
      [
        filter("lastName eq 'a' and"),
        "$filter is not valid OData syntax: lastName eq 'a' and (it ends too early)",
      ],
      [
        filter('remote eq true)'),
        '$filter is not valid OData syntax: remote eq true) (at character 15: ")")',
      ],
      ['/Employees?$filter=', '$filter is not valid OData syntax:  (it ends too early)'],
      [
        '/Employees?$orderby=basePay%20sideways',
        '$orderby is not valid OData syntax: basePay sideways (at character 9: "sideways")',
      ],
      [
        '/Employees?$orderby=basePay,',
        '$orderby is not valid OData syntax: basePay, (it ends too early)',
      ],
      ['/Employees?$orderby=nosuch', '$orderby: Employee has no property nosuch'],
      [filter('dept in ()'), '$filter: in () needs at least one value'],
      [filter(`ratio in (${list(1001)})`), '$filter: in takes at most 1000 values, not 1001'],
      [
        filter("tolower(basePay) eq 'x'"),
        '$filter: tolower takes Edm.String; basePay is Edm.Decimal',
      ],
      [
        filter('year(lastName) eq 2020'),
        '$filter: year takes Edm.Date or Edm.DateTimeOffset; lastName is Edm.String',
      ],
      [
        filter("length(lastName) eq 'x'"),
        "$filter: 'x' is not a valid Edm.Int32 literal for length(lastName)",
      ],
      [
        filter('length(lastName,dept) eq 1'),
        '$filter: length takes one argument: length(property)',
      ],
      [filter("foo(lastName) eq 'x'"), '$filter: foo is not an OData function'],
      [
        filter("contains(lastName,'a') eq null"),
        "$filter: contains(lastName,'a') is a condition: compare it with true or false, or with nothing",
      ],
      [
        filter('tolower(lastName)'),
        '$filter: tolower(lastName) is not a Boolean expression: compare it with a literal',
      ],
      [filter('ratio eq NaN'), '$filter: NaN is not a valid Edm.Decimal literal for ratio'],
      [filter('ratio eq 1e400'), '$filter: 1e400 is not a valid Edm.Decimal literal for ratio'],
      [filter("dept in ('a',1)"), '$filter: 1 is not a valid Edm.String literal for dept'],
      [filter("'a'"), "$filter: 'a' is not a Boolean expression"],
    ];
    for (const [path, message] of cases) {
      const response = await get(path);
      expect(response.status, path).toBe(400);
      expect(response.headers.get('odata-version')).toBe('4.0');
      expect(response.json, path).toEqual({ error: { code: '400', message } });
    }
  });

  it('answers 501 for what OData has and the feed does not serve', async () => {
    const cases: [string, RegExp][] = [
      [
        filter("substring(lastName,1) eq 'x'"),
        /^\$filter: the function substring is not supported by this feed/,
      ],
      [filter("contains(lastName,'a') gt true"), /^\$filter: ordering a condition/],
      [filter("remote has Compplan.Flag'x'"), /^\$filter: the operator has is not supported/],
      [
        filter("Tags/any(t:t eq 'x')"),
        /^\$filter: the path Tags\/any\(t:t eq 'x'\) is not supported/,
      ],
      [filter('ratio add 1 gt 2'), /^\$filter: the operator add is not supported/],
      [filter('-ratio gt 2'), /^\$filter: negation is not supported/],
      [filter("cast(ratio,Edm.String) eq '1'"), /^\$filter: the function cast is not supported/],
      [filter('ratio eq @p'), /^\$filter: the parameter alias @p is not supported/],
      [filter('$it/ratio eq 1'), /^\$filter: \$it\/ratio is not supported/],
      [
        filter('lastName in dept'),
        /^\$filter: in with anything but a list of literals is not supported/,
      ],
      [
        '/Employees?$orderby=tolower(lastName)',
        /^\$orderby=tolower\(lastName\) \(only property names\) is not supported/,
      ],
    ];
    for (const [path, message] of cases) {
      const response = await get(path);
      expect(response.status, path).toBe(501);
      expect(response.json.error.code).toBe('501');
      expect(response.json.error.message, path).toMatch(message);
    }
  });

  it('bounds in at 1,000 literals; a list too long for a URL is 414 before it is read', async () => {
    const thousand = await get(filter(`ratio in (${list(1000)})`));
    expect(thousand.status).toBe(200);
    expect(thousand.json.value.map((e: { ratio: number }) => e.ratio)).toEqual([12, 12, 12]);
    const tenThousand = await get(filter(`ratio in (${list(10_000)})`));
    expect(tenThousand.status).toBe(414);
  });

  it('never answers 500 to a random $filter or $orderby (fast-check)', async () => {
    const token = fc.constantFrom(
      'lastName',
      'dept',
      'ratio',
      'basePay',
      'hireDate',
      'remote',
      'id',
      'nosuch',
      'eq',
      'ne',
      'gt',
      'lt',
      'and',
      'or',
      'not',
      'in',
      'has',
      'add',
      'asc',
      'desc',
      '(',
      ')',
      ',',
      ' ',
      "'x'",
      "'O''B'",
      "''",
      '1',
      '-1',
      '0.5',
      '1e3',
      '99999999999999999999999',
      'null',
      'true',
      'false',
      '2020-01-01',
      '2020-02-30',
      '2025-01-01T00:00:00Z',
      'contains(',
      'startswith(',
      'endswith(',
      'tolower(',
      'toupper(',
      'trim(',
      'length(',
      'year(',
      'month(',
      'day(',
      'substring(',
      'foo(',
      '/',
      '$it',
      '@p',
      "'",
      '%',
      '+',
      '%2B',
      '\u00e9',
      '\u{1F600}',
    );
    const expression = fc.array(token, { maxLength: 12 }).map((parts) => parts.join(''));
    const noise = fc.string({ unit: 'binary', maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(expression, noise),
        fc.constantFrom('$filter', '$orderby'),
        async (text, option) => {
          const response = await get(`/Employees?${option}=${encodeURIComponent(text)}&$top=2`);
          expect([200, 400, 501], `${option}=${text}: ${response.text}`).toContain(response.status);
          if (response.status !== 200) {
            expect(response.json.error.code).toBe(String(response.status));
          }
        },
      ),
      { numRuns: 200, seed: 46 },
    );
    // Each run is a request: about 30 ms each on a loaded 2-core machine.
  }, 120_000);
});
