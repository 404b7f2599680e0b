// Two organisations, a key each: nothing of one may reach the other (docs/api-behaviour.md,
// "Path ids" and "Bad cursors"). Every endpoint is asked, with each key,
// about the other organisation's cycles, their employees and their cursors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBEX_SECOND_CYCLE, globexSecondCycleDataSet } from '../fixtures/api-data-sets.js';
import {
  ACME,
  ACME_LIST_ORDER,
  acmeDataSet,
  CYCLE,
  GLOBEX,
  globexDataSet,
} from '../fixtures/data-sets.js';
import {
  cyclePath,
  employeesPath,
  errorBody,
  MERIT_CYCLES,
  type Page,
  ratesPath,
  walkPages,
} from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const INVALID_CURSOR =
  'nextCursor is not a valid cursor: pass back the nextCursor of a previous page, unchanged';

const ACME_CYCLE_IDS = [...ACME_LIST_ORDER];
const GLOBEX_CYCLE_IDS = [CYCLE.globex, GLOBEX_SECOND_CYCLE];

const employeeIdsOf = (dataSet: ReturnType<typeof acmeDataSet>) =>
  dataSet.meritCycles.flatMap((cycle) => (cycle.employees ?? []).map((e) => e.id ?? ''));
const ACME_EMPLOYEE_IDS = employeeIdsOf(acmeDataSet());
const GLOBEX_EMPLOYEE_IDS = [
  ...employeeIdsOf(globexDataSet()),
  ...employeeIdsOf(globexSecondCycleDataSet()),
];

interface Side {
  org: string;
  key: () => string;
  ownCycles: string[];
  otherCycles: string[];
  ownEmployees: string[];
  otherEmployees: string[];
  /** One of its own cycles with more than one employee, for employee cursors. */
  cycleWithEmployees: string;
}

describe('tenant isolation', () => {
  let server: TestServer;
  let acme: string;
  let globex: string;
  const sides: Side[] = [
    {
      org: ACME,
      key: () => acme,
      ownCycles: ACME_CYCLE_IDS,
      otherCycles: GLOBEX_CYCLE_IDS,
      ownEmployees: ACME_EMPLOYEE_IDS,
      otherEmployees: GLOBEX_EMPLOYEE_IDS,
      cycleWithEmployees: CYCLE.annual2025,
    },
    {
      org: GLOBEX,
      key: () => globex,
      ownCycles: GLOBEX_CYCLE_IDS,
      otherCycles: ACME_CYCLE_IDS,
      ownEmployees: GLOBEX_EMPLOYEE_IDS,
      otherEmployees: ACME_EMPLOYEE_IDS,
      cycleWithEmployees: CYCLE.globex,
    },
  ];
  const otherSide = (side: Side) => sides.find((candidate) => candidate !== side) as Side;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [acmeDataSet(), globexDataSet(), globexSecondCycleDataSet()],
    });
    acme = await server.createKey(ACME);
    globex = await server.createKey(GLOBEX);
  });
  afterAll(() => server.close());

  async function get(path: string, key: string, method = 'GET') {
    const response = await server.request(path, { key, method });
    const text = await response.text();
    return { status: response.status, body: text === '' ? '' : (JSON.parse(text) as unknown) };
  }

  async function cursorOf(path: string, key: string): Promise<string> {
    const page = (await get(path, key)).body as Page<unknown>;
    if (!page.nextCursor) throw new Error(`${path} gave no cursor`);
    return page.nextCursor;
  }

  describe.each(sides.map((side) => [side.org, side] as const))('with a key of %s', (_, side) => {
    const endpoints: [string, (id: string) => string][] = [
      ['GET /meritCycles/{id}', cyclePath],
      ['GET /meritCycles/{id}/exchangeRates', ratesPath],
      ['GET /meritCycles/{id}/employees', employeesPath],
      ['GET /meritCycles/{id}/employees?limit=1', (id) => `${employeesPath(id)}?limit=1`],
    ];

    it.each(endpoints)(
      '%s answers 404 "Merit cycle not found" for every cycle of the other organisation',
      async (_, pathOf) => {
        for (const id of side.otherCycles) {
          const path = pathOf(id);
          expect(await get(path, side.key()), path).toEqual({
            status: 404,
            body: errorBody(path.split('?')[0] ?? path, 'Merit cycle not found', 404),
          });
        }
      },
    );

    it.each(endpoints)(
      '%s: the other organisation’s cycle looks exactly like one that does not exist',
      async (_, pathOf) => {
        const foreign = await get(pathOf(side.otherCycles[0] ?? ''), side.key());
        const missing = await get(pathOf('mc_00000000-0000-4000-8000-000000000000'), side.key());
        const strip = (body: unknown) => {
          const { timestamp: _t, path: _p, ...rest } = body as Record<string, unknown>;
          return rest;
        };
        expect(foreign.status).toBe(missing.status);
        expect(strip(foreign.body)).toEqual(strip(missing.body));
      },
    );

    it('HEAD on the other organisation’s cycle endpoints answers 404 with no body', async () => {
      for (const pathOf of [cyclePath, ratesPath, employeesPath]) {
        const path = pathOf(side.otherCycles[0] ?? '');
        expect(await get(path, side.key(), 'HEAD'), path).toEqual({ status: 404, body: '' });
      }
    });

    it('the other organisation’s employee ids name nothing (404 as a cycle id)', async () => {
      for (const id of side.otherEmployees) {
        for (const pathOf of [cyclePath, ratesPath, employeesPath]) {
          expect((await get(pathOf(id), side.key())).status, pathOf(id)).toBe(404);
        }
      }
    });

    it('the other organisation’s merit cycle list cursor → 400', async () => {
      const cursor = await cursorOf(`${MERIT_CYCLES}?limit=1`, otherSide(side).key());
      for (const query of [`nextCursor=${cursor}`, `limit=1&nextCursor=${cursor}`]) {
        expect(await get(`${MERIT_CYCLES}?${query}`, side.key())).toEqual({
          status: 400,
          body: errorBody(MERIT_CYCLES, INVALID_CURSOR, 400),
        });
      }
    });

    it('the other organisation’s employees cursor → 400 on an own cycle, 404 on theirs', async () => {
      const other = otherSide(side);
      const cursor = await cursorOf(
        `${employeesPath(other.cycleWithEmployees)}?limit=1`,
        other.key(),
      );
      const own = employeesPath(side.cycleWithEmployees);
      expect(await get(`${own}?nextCursor=${cursor}`, side.key())).toEqual({
        status: 400,
        body: errorBody(own, INVALID_CURSOR, 400),
      });
      const theirs = employeesPath(other.cycleWithEmployees);
      expect(await get(`${theirs}?nextCursor=${cursor}`, side.key())).toEqual({
        status: 404,
        body: errorBody(theirs, 'Merit cycle not found', 404),
      });
    });

    it('the merit cycle list holds exactly the own cycles, page by page', async () => {
      const walk = await walkPages<{ id: string }>(server, side.key(), MERIT_CYCLES, { limit: 1 });
      expect(walk.items.map((cycle) => cycle.id)).toEqual(side.ownCycles);
    });

    it.each([
      'status=active',
      'status=active&gte=2025-01-01&lte=2025-01-01',
      'startDate[gte]=2025-01-01&startDate[lt]=2025-01-02',
      'status=finalized&lte=2024-01-01',
      'limit=100',
    ])('a filter that matches both organisations (%s) lists only own cycles', async (query) => {
      const { status, body } = await get(`${MERIT_CYCLES}?${query}`, side.key());
      expect(status).toBe(200);
      const ids = (body as Page<{ id: string }>).data.map((cycle) => cycle.id);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) expect(side.ownCycles).toContain(id);
    });

    it('employee lists of own cycles hold exactly the own employees, never the other’s', async () => {
      const seen: string[] = [];
      for (const cycle of side.ownCycles) {
        const walk = await walkPages<{ id: string; email: string }>(
          server,
          side.key(),
          employeesPath(cycle),
          { limit: 2 },
        );
        seen.push(...walk.items.map((employee) => employee.id));
      }
      for (const id of seen) expect(side.otherEmployees).not.toContain(id);
      expect(seen.sort()).toEqual([...side.ownEmployees].sort());
    });
  });

  it('serves each organisation its own same-named cycles (both have "2025 Annual Merit")', async () => {
    expect(await get(cyclePath(CYCLE.annual2025), acme)).toEqual({
      status: 200,
      body: {
        id: CYCLE.annual2025,
        name: '2025 Annual Merit',
        startDate: '2025-01-01T00:00:00.000Z',
        endDate: '2025-03-31T23:59:59.999Z',
        createdDate: '2024-11-15T09:30:00.000Z',
        status: 'active',
      },
    });
    expect(await get(`${MERIT_CYCLES}`, globex)).toEqual({
      status: 200,
      body: {
        data: [
          {
            id: CYCLE.globex,
            name: '2025 Annual Merit',
            startDate: '2025-01-01T00:00:00.000Z',
            endDate: '2025-03-31T00:00:00.000Z',
            createdDate: '2024-11-15T09:30:00.000Z',
            status: 'active',
          },
          {
            id: GLOBEX_SECOND_CYCLE,
            name: '2024 Annual Merit',
            startDate: '2024-01-01T00:00:00.000Z',
            endDate: '2024-03-31T00:00:00.000Z',
            createdDate: '2023-11-15T09:30:00.000Z',
            status: 'finalized',
          },
        ],
        nextCursor: null,
      },
    });
    expect(await get(ratesPath(CYCLE.globex), globex)).toEqual({
      status: 200,
      body: { base: 'EUR', rates: { USD: 1.09 } },
    });
  });
});
