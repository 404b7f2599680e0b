// GET /v1/compensationPlanning/meritCycles, …/{id} and …/{id}/exchangeRates, over real HTTP:
// exact objects and order, the status and startDate filters of docs/api-behaviour.md on
// the fixture edges, and the 422 bodies of query validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITECH, manyCyclesDataSet } from '../fixtures/api-data-sets.js';
import { ACME, ADA_ID, acmeDataSet, CYCLE, globexDataSet } from '../fixtures/data-sets.js';
import {
  compareMeritCycles,
  cyclePath,
  errorBody,
  JSON_TYPE,
  MERIT_CYCLES,
  ratesPath,
  type ValidationItem,
} from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ACME_CYCLES = {
  annual2025: {
    id: CYCLE.annual2025,
    name: '2025 Annual Merit',
    startDate: '2025-01-01T00:00:00.000Z',
    endDate: '2025-03-31T23:59:59.999Z',
    createdDate: '2024-11-15T09:30:00.000Z',
    status: 'active',
  },
  midYear: {
    id: CYCLE.midYear,
    name: '2025 Mid-Year Review',
    startDate: '2024-12-31T23:59:59.999Z',
    endDate: '2025-01-31T00:00:00.000Z',
    createdDate: '2024-11-01T00:00:00.000Z',
    status: 'inactive',
  },
  offset: {
    id: CYCLE.offset,
    name: 'Pacific Kick-off',
    // Loaded as 2025-01-01T18:00:00-08:00: served in UTC.
    startDate: '2025-01-02T02:00:00.000Z',
    endDate: '2025-02-01T00:00:00.000Z',
    createdDate: '2024-10-01T00:00:00.000Z',
    status: 'active',
  },
  lateJanuary: {
    id: CYCLE.lateJanuary,
    name: 'Late January Adjustments',
    startDate: '2025-01-31T12:00:00.000Z',
    endDate: '2025-02-28T00:00:00.000Z',
    createdDate: '2024-09-01T00:00:00.000Z',
    status: 'finalized',
  },
  february: {
    id: CYCLE.february,
    name: 'February Promotions',
    startDate: '2025-02-01T00:00:00.000Z',
    endDate: '2025-02-28T00:00:00.000Z',
    createdDate: '2024-09-01T00:00:00.000Z',
    status: 'finalized',
  },
  lastYear: {
    id: CYCLE.lastYear,
    name: '2024 Annual Merit',
    startDate: '2024-01-01T00:00:00.000Z',
    endDate: '2024-03-31T00:00:00.000Z',
    createdDate: '2023-11-15T09:30:00.000Z',
    status: 'finalized',
  },
} as const;
type CycleName = keyof typeof ACME_CYCLES;

/** Newest createdDate first; lateJanuary and february tie and are ordered by id. */
const ALL_IN_ORDER: CycleName[] = [
  'annual2025',
  'midYear',
  'offset',
  'lateJanuary',
  'february',
  'lastYear',
];
const cycles = (...names: CycleName[]) => names.map((name) => ACME_CYCLES[name]);

const INVALID_STATUS = 'Invalid option: expected one of "active"|"inactive"|"finalized"';
const ARRAY_NOT_STRING = 'Invalid input: expected string, received array';

/** The body of a 422 for the query of `path`; the message lists every item. */
function invalidQuery(path: string, items: ValidationItem[]) {
  const summary = items.map((item) => `${item.path}: ${item.message}`).join('; ');
  return errorBody(path, `Invalid query parameters: ${summary}`, 422, items);
}

describe('merit cycles', () => {
  let server: TestServer;
  let acme: string;
  let initech: string;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [acmeDataSet(), globexDataSet(), manyCyclesDataSet(30)],
    });
    acme = await server.createKey(ACME);
    initech = await server.createKey(INITECH);
  });
  afterAll(() => server.close());

  async function get(path: string, key = acme) {
    const response = await server.request(path, { key });
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    return { status: response.status, body: (await response.json()) as unknown };
  }

  /** GET the list with a query string; expects 200 and returns the body. */
  async function list(query: string, key = acme) {
    const { status, body } = await get(`${MERIT_CYCLES}?${query}`, key);
    expect(status, JSON.stringify(body)).toBe(200);
    return body;
  }

  describe('GET /meritCycles', () => {
    it('lists every cycle of the organisation as exact objects, newest createdDate first, ties by id ascending', async () => {
      expect(await get(MERIT_CYCLES)).toEqual({
        status: 200,
        body: { data: cycles(...ALL_IN_ORDER), nextCursor: null },
      });
    });

    it('returns 25 cycles by default, then the rest on the next page', async () => {
      const expected = manyCyclesDataSet(30)
        .meritCycles.map((cycle) => ({
          id: cycle.id ?? '',
          name: cycle.name,
          startDate: cycle.startDate,
          endDate: cycle.endDate,
          createdDate: cycle.createdDate ?? '',
          status: cycle.status,
        }))
        .sort(compareMeritCycles);
      const first = (await list('', initech)) as { data: unknown[]; nextCursor: string | null };
      expect(first.data).toEqual(expected.slice(0, 25));
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await list(`nextCursor=${first.nextCursor}`, initech);
      expect(second).toEqual({ data: expected.slice(25), nextCursor: null });
    });

    it('orders many cycles with shared createdDates by createdDate desc, then id asc (limit=100)', async () => {
      const body = (await list('limit=100', initech)) as { data: { id: string }[] };
      const expectedIds = manyCyclesDataSet(30)
        .meritCycles.map((cycle) => ({ id: cycle.id ?? '', createdDate: cycle.createdDate ?? '' }))
        .sort(compareMeritCycles)
        .map((cycle) => cycle.id);
      expect(body.data.map((cycle) => cycle.id)).toEqual(expectedIds);
    });

    it('honours limit=1 and limit=100 (the bounds)', async () => {
      const one = (await list('limit=1')) as { data: unknown[]; nextCursor: string | null };
      expect(one.data).toEqual(cycles('annual2025'));
      expect(one.nextCursor).toEqual(expect.any(String));
      expect(await list('limit=100')).toEqual({ data: cycles(...ALL_IN_ORDER), nextCursor: null });
    });

    it('never lists another organisation’s cycles', async () => {
      const body = (await list('limit=100&status=active')) as { data: { id: string }[] };
      expect(body.data.map((cycle) => cycle.id)).toEqual([CYCLE.annual2025, CYCLE.offset]);
    });
  });

  describe('GET /meritCycles/{id}', () => {
    it.each(ALL_IN_ORDER)(
      'returns the exact %s cycle, its dates in UTC with milliseconds',
      async (name) => {
        expect(await get(cyclePath(ACME_CYCLES[name].id))).toEqual({
          status: 200,
          body: ACME_CYCLES[name],
        });
      },
    );

    const notFoundIds: [string, string][] = [
      ['an unknown id of the right shape', 'mc_10000000-0000-4000-8000-000000000099'],
      ['another organisation’s id', CYCLE.globex],
      ['a plain word', 'abc'],
      ['an upper-case prefix', CYCLE.annual2025.replace('mc_', 'MC_')],
      ['an upper-case UUID', `mc_${'10000000-0000-4000-8000-00000000000A'}`],
      ['a truncated id', CYCLE.annual2025.slice(0, -1)],
      ['an id with a suffix', `${CYCLE.annual2025}x`],
      ['an employee id', ADA_ID],
      ['an id with an encoded leading space', `%20${CYCLE.annual2025}`],
      ['an id with an encoded NUL', `${CYCLE.annual2025}%00`],
    ];

    it.each(notFoundIds)('answers 404 with the standard body for %s', async (_, id) => {
      expect(await get(cyclePath(id))).toEqual({
        status: 404,
        body: errorBody(cyclePath(id), 'Merit cycle not found', 404),
      });
    });

    it.each(notFoundIds)('answers 404 on exchangeRates for %s', async (_, id) => {
      expect(await get(ratesPath(id))).toEqual({
        status: 404,
        body: errorBody(ratesPath(id), 'Merit cycle not found', 404),
      });
    });

    it('answers an id of 500 characters as any unknown id: 404 Merit cycle not found', async () => {
      const id = `mc_${'a'.repeat(500)}`;
      expect(await get(cyclePath(id))).toEqual({
        status: 404,
        body: errorBody(cyclePath(id), 'Merit cycle not found', 404),
      });
    });

    it('rejects an unknown query parameter on a single cycle with 422 unrecognized_keys', async () => {
      expect(await get(`${cyclePath(CYCLE.annual2025)}?stauts=active`)).toEqual({
        status: 422,
        body: invalidQuery(cyclePath(CYCLE.annual2025), [
          { path: 'stauts', message: 'Unrecognized parameter "stauts"', code: 'unrecognized_keys' },
        ]),
      });
    });

    it('rejects an unknown query parameter on exchangeRates with 422 unrecognized_keys', async () => {
      expect(await get(`${ratesPath(CYCLE.annual2025)}?base=EUR`)).toEqual({
        status: 422,
        body: invalidQuery(ratesPath(CYCLE.annual2025), [
          { path: 'base', message: 'Unrecognized parameter "base"', code: 'unrecognized_keys' },
        ]),
      });
    });
  });

  describe('GET /meritCycles/{id}/exchangeRates', () => {
    it('returns base = the cycle currency and the rates exactly as loaded', async () => {
      const response = await server.request(ratesPath(CYCLE.annual2025), { key: acme });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        base: 'USD',
        rates: { EUR: 0.92, GBP: 0.79, JPY: 151.3 },
      });
      // The numbers are written as loaded, not rounded or reformatted.
      expect(text).toContain('"EUR":0.92');
      expect(text).toContain('"GBP":0.79');
      expect(text).toContain('"JPY":151.3');
    });

    it('uses the cycle’s own currency as base (EUR cycle)', async () => {
      expect(await get(ratesPath(CYCLE.midYear))).toEqual({
        status: 200,
        body: { base: 'EUR', rates: { USD: 1.087 } },
      });
    });

    it('answers rates {} for a cycle loaded without exchange rates', async () => {
      expect(await get(ratesPath(CYCLE.offset))).toEqual({
        status: 200,
        body: { base: 'USD', rates: {} },
      });
      expect(await get(ratesPath(CYCLE.lateJanuary))).toEqual({
        status: 200,
        body: { base: 'GBP', rates: {} },
      });
    });
  });

  describe('status filter', () => {
    it.each([
      ['active', cycles('annual2025', 'offset')],
      ['inactive', cycles('midYear')],
      ['finalized', cycles('lateJanuary', 'february', 'lastYear')],
    ])('status=%s keeps only cycles in that status, in list order', async (status, expected) => {
      expect(await list(`status=${status}`)).toEqual({ data: expected, nextCursor: null });
    });
  });

  describe('startDate filter (UTC calendar date of startDate)', () => {
    type Bound = 'gt' | 'gte' | 'lt' | 'lte';
    const cases: [string, [Bound, string][], CycleName[]][] = [
      [
        'gte=2025-01-01 keeps 00:00Z on 1 Jan and drops 23:59:59.999Z on 31 Dec',
        [['gte', '2025-01-01']],
        ['annual2025', 'offset', 'lateJanuary', 'february'],
      ],
      [
        'gt=2025-01-01 keeps 2 Jan onwards, including 1 Jan 18:00 in California (2 Jan UTC)',
        [['gt', '2025-01-01']],
        ['offset', 'lateJanuary', 'february'],
      ],
      [
        'gt=2024-12-31 drops a cycle at 23:59:59.999Z on 31 Dec',
        [['gt', '2024-12-31']],
        ['annual2025', 'offset', 'lateJanuary', 'february'],
      ],
      [
        'lte=2025-01-31 keeps a cycle at 12:00Z on 31 Jan',
        [['lte', '2025-01-31']],
        ['annual2025', 'midYear', 'offset', 'lateJanuary', 'lastYear'],
      ],
      [
        'lt=2025-01-31 drops a cycle at 12:00Z on 31 Jan',
        [['lt', '2025-01-31']],
        ['annual2025', 'midYear', 'offset', 'lastYear'],
      ],
      [
        'lte=2024-12-31 keeps 23:59:59.999Z on 31 Dec and drops 00:00Z on 1 Jan',
        [['lte', '2024-12-31']],
        ['midYear', 'lastYear'],
      ],
      [
        'lt=2025-01-01 keeps 23:59:59.999Z on 31 Dec',
        [['lt', '2025-01-01']],
        ['midYear', 'lastYear'],
      ],
      [
        'gte=2025-01-02 keeps 1 Jan 18:00-08:00 (2 Jan UTC)',
        [['gte', '2025-01-02']],
        ['offset', 'lateJanuary', 'february'],
      ],
      [
        'lte=2025-01-01 drops 1 Jan 18:00-08:00 (2 Jan UTC)',
        [['lte', '2025-01-01']],
        ['annual2025', 'midYear', 'lastYear'],
      ],
      [
        'gte=lte=2025-01-02 keeps exactly the cycles of that UTC day',
        [
          ['gte', '2025-01-02'],
          ['lte', '2025-01-02'],
        ],
        ['offset'],
      ],
      [
        'gte=lte=2024-12-31 keeps the cycle at 23:59:59.999Z',
        [
          ['gte', '2024-12-31'],
          ['lte', '2024-12-31'],
        ],
        ['midYear'],
      ],
      [
        'gt=2024-12-31 and lt=2025-02-01 combine with AND',
        [
          ['gt', '2024-12-31'],
          ['lt', '2025-02-01'],
        ],
        ['annual2025', 'offset', 'lateJanuary'],
      ],
      [
        'gte=2025-01-01 and lte=2025-01-31 combine with AND',
        [
          ['gte', '2025-01-01'],
          ['lte', '2025-01-31'],
        ],
        ['annual2025', 'offset', 'lateJanuary'],
      ],
      [
        'gt=2024-12-30 and lt=2025-01-02 keep 31 Dec and 1 Jan',
        [
          ['gt', '2024-12-30'],
          ['lt', '2025-01-02'],
        ],
        ['annual2025', 'midYear'],
      ],
      [
        'all four bounds at once combine with AND',
        [
          ['gt', '2024-06-30'],
          ['gte', '2025-01-01'],
          ['lt', '2025-02-01'],
          ['lte', '2025-01-30'],
        ],
        ['annual2025', 'offset'],
      ],
      ['gte=2024-02-29 accepts a leap day', [['gte', '2024-02-29']], ALL_IN_ORDER.slice(0, 5)],
      ['gte=0001-01-01 keeps everything', [['gte', '0001-01-01']], ALL_IN_ORDER],
      ['lte=9999-12-31 keeps everything', [['lte', '9999-12-31']], ALL_IN_ORDER],
    ];

    const flat = (bounds: [Bound, string][]) => bounds.map(([b, v]) => `${b}=${v}`).join('&');
    const bracket = (bounds: [Bound, string][]) =>
      bounds.map(([b, v]) => `startDate[${b}]=${v}`).join('&');
    const encodedBracket = (bounds: [Bound, string][]) =>
      bounds.map(([b, v]) => `startDate%5B${b}%5D=${v}`).join('&');
    const mixed = (bounds: [Bound, string][]) =>
      bounds.map(([b, v], i) => (i % 2 === 0 ? `${b}=${v}` : `startDate[${b}]=${v}`)).join('&');

    it.each(cases)(
      '%s (flat, bracket, encoded bracket and mixed forms agree)',
      async (_, bounds, names) => {
        const expected = { data: cycles(...names), nextCursor: null };
        expect(await list(flat(bounds))).toEqual(expected);
        expect(await list(bracket(bounds))).toEqual(expected);
        expect(await list(encodedBracket(bounds))).toEqual(expected);
        expect(await list(mixed(bounds))).toEqual(expected);
      },
    );

    it.each([
      ['status=active&gte=2025-01-02', cycles('offset')],
      ['status=finalized&lte=2025-01-31', cycles('lateJanuary', 'lastYear')],
      ['status=active&startDate[lt]=2025-01-02', cycles('annual2025')],
      ['startDate[gte]=2025-01-01&status=finalized&lt=2025-02-01', cycles('lateJanuary')],
    ])('%s combines status and startDate with AND', async (query, expected) => {
      expect(await list(query)).toEqual({ data: expected, nextCursor: null });
    });

    it.each([
      'gt=2025-02-01',
      'gte=2025-02-02',
      'lt=2024-01-01',
      'gt=2025-01-01&lt=2025-01-02',
      'gte=2025-02-01&lt=2025-02-01',
      'startDate[gt]=2025-01-31&startDate[lte]=2025-01-31',
      'gt=9999-12-31',
      'status=inactive&gte=2025-01-01',
    ])('%s excludes everything: 200 with empty data and nextCursor null', async (query) => {
      expect(await list(query)).toEqual({ data: [], nextCursor: null });
    });

    it.each(['gt', 'gte', 'lt', 'lte'])(
      'the same bound (%s) flat and in bracket form is a 422',
      async (bound) => {
        for (const values of [
          ['2025-01-01', '2025-01-01'],
          ['2025-01-01', '2025-02-01'],
        ]) {
          const query = `${bound}=${values[0]}&startDate[${bound}]=${values[1]}`;
          expect(await get(`${MERIT_CYCLES}?${query}`)).toEqual({
            status: 422,
            body: invalidQuery(MERIT_CYCLES, [
              {
                path: `startDate[${bound}]`,
                message: `startDate ${bound} is given twice (as ${bound} and as startDate[${bound}])`,
                code: 'custom',
              },
            ]),
          });
        }
      },
    );

    it.each([
      '2025-02-30',
      '2023-02-29',
      '2025-04-31',
      '2025-13-01',
      '2025-00-10',
      '2025-01-00',
      '2025-1-01',
      '20250101',
      '2025-01-01T00:00:00Z',
      '01/02/2025',
      'yesterday',
      '',
    ])('gte=%j is not an existing YYYY-MM-DD date: 422 invalid_format', async (value) => {
      expect(await get(`${MERIT_CYCLES}?gte=${encodeURIComponent(value)}`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [
          { path: 'gte', message: 'Invalid ISO date', code: 'invalid_format' },
        ]),
      });
    });

    it.each([
      'gt',
      'gte',
      'lt',
      'lte',
      'startDate[gt]',
      'startDate[gte]',
      'startDate[lt]',
      'startDate[lte]',
    ])('%s=2025-02-30 is a 422 invalid_format naming that parameter', async (name) => {
      expect(await get(`${MERIT_CYCLES}?${name}=2025-02-30`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [
          { path: name, message: 'Invalid ISO date', code: 'invalid_format' },
        ]),
      });
    });
  });

  describe('query validation', () => {
    const tooSmall = { path: 'limit', message: 'must be at least 1', code: 'too_small' };
    const tooBig = { path: 'limit', message: 'must be at most 100', code: 'too_big' };
    const notInteger = { path: 'limit', message: 'must be a whole number', code: 'invalid_type' };

    it.each([
      ['0', tooSmall],
      ['-1', tooSmall],
      ['101', tooBig],
      ['1000', tooBig],
      ['abc', notInteger],
      ['2.5', notInteger],
      ['', notInteger],
      ['1e2', notInteger],
      ['0x10', notInteger],
      [' 5', notInteger],
    ])('limit=%j → 422 with exactly one item %o', async (value, item) => {
      expect(await get(`${MERIT_CYCLES}?limit=${encodeURIComponent(value)}`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [item]),
      });
    });

    it('a limit beyond the safe integers is one too_big item, not two', async () => {
      expect(await get(`${MERIT_CYCLES}?limit=99999999999999999999`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [tooBig]),
      });
    });

    it.each([
      ['stauts=active', ['stauts']],
      ['startDate=2025-01-01', ['startDate']],
      ['startDate[foo]=2025-01-01', ['startDate[foo]']],
      ['page=2', ['page']],
      ['stauts=active&sort=name', ['stauts', 'sort']],
    ])('%s → 422 unrecognized_keys naming each unknown parameter', async (query, names) => {
      expect(await get(`${MERIT_CYCLES}?${query}`)).toEqual({
        status: 422,
        body: invalidQuery(
          MERIT_CYCLES,
          names.map((name) => ({
            path: name,
            message: `Unrecognized parameter "${name}"`,
            code: 'unrecognized_keys',
          })),
        ),
      });
    });

    it.each(['pending', 'ACTIVE', 'active ', ''])(
      'status=%j → 422 invalid_value',
      async (value) => {
        expect(await get(`${MERIT_CYCLES}?status=${encodeURIComponent(value)}`)).toEqual({
          status: 422,
          body: invalidQuery(MERIT_CYCLES, [
            { path: 'status', message: INVALID_STATUS, code: 'invalid_value' },
          ]),
        });
      },
    );

    it.each([
      [
        'status=active&status=active',
        { path: 'status', message: INVALID_STATUS, code: 'invalid_value' },
      ],
      [
        'status=active&status=finalized',
        { path: 'status', message: INVALID_STATUS, code: 'invalid_value' },
      ],
      ['limit=10&limit=10', notInteger],
      [
        'gte=2025-01-01&gte=2025-01-01',
        { path: 'gte', message: ARRAY_NOT_STRING, code: 'invalid_type' },
      ],
      [
        'startDate[lte]=2025-01-01&startDate[lte]=2025-02-01',
        { path: 'startDate[lte]', message: ARRAY_NOT_STRING, code: 'invalid_type' },
      ],
      [
        'nextCursor=a&nextCursor=b',
        { path: 'nextCursor', message: ARRAY_NOT_STRING, code: 'invalid_type' },
      ],
    ])('a repeated parameter (%s) → 422, never a silent pick of one value', async (query, item) => {
      expect(await get(`${MERIT_CYCLES}?${query}`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [item]),
      });
    });

    it('an empty nextCursor → 422 too_small', async () => {
      expect(await get(`${MERIT_CYCLES}?nextCursor=`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [
          {
            path: 'nextCursor',
            message: 'Too small: expected string to have >=1 characters',
            code: 'too_small',
          },
        ]),
      });
    });

    it('reports every invalid parameter of one request, each with its path and code', async () => {
      expect(await get(`${MERIT_CYCLES}?limit=0&stauts=x&status=nope&gte=2025-02-30`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [
          { path: 'status', message: INVALID_STATUS, code: 'invalid_value' },
          { path: 'gte', message: 'Invalid ISO date', code: 'invalid_format' },
          tooSmall,
          { path: 'stauts', message: 'Unrecognized parameter "stauts"', code: 'unrecognized_keys' },
        ]),
      });
    });

    it('validates the query of a valid-looking cursor request too', async () => {
      const first = (await list('limit=1')) as { nextCursor: string };
      expect(await get(`${MERIT_CYCLES}?nextCursor=${first.nextCursor}&limit=101`)).toEqual({
        status: 422,
        body: invalidQuery(MERIT_CYCLES, [tooBig]),
      });
    });
  });
});
