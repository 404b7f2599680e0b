// The tenant-isolation matrix (OWASP API1, broken object level authorization): every
// endpoint × every way of naming another organisation's objects — its cycle ids (as
// given, percent-encoded, in another case), its employee ids, its cursors (of either
// list, with and without filters, carried to either of our lists), its cycles' employee
// lists — with GET and HEAD, from both sides. Each answer is 404 or 400 with the standard
// error body, the same as for something that does not exist, and names nothing of the
// other organisation beyond what the request itself sent. Runs on every database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBEX_SECOND_CYCLE, globexSecondCycleDataSet } from '../fixtures/api-data-sets.js';
import { ACME, acmeDataSet, CYCLE, GLOBEX, globexDataSet } from '../fixtures/data-sets.js';
import {
  columnsPath,
  employeesPath,
  MERIT_CYCLES,
  type Page,
} from '../helpers/api-expectations.js';
import {
  CYCLE_ENDPOINTS,
  expectRefused as expectRefusedBy,
  ID_FORMS,
  INVALID_CURSOR,
  INVALID_DELTA_TOKEN,
  CYCLE_NOT_FOUND as NOT_FOUND,
} from '../helpers/isolation.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type DataSet = ReturnType<typeof acmeDataSet>;
const employeeIdsOf = (...dataSets: DataSet[]) =>
  dataSets.flatMap((d) => d.meritCycles.flatMap((c) => (c.employees ?? []).map((e) => e.id ?? '')));

interface Tenant {
  org: string;
  key: string;
  cycles: string[];
  employees: string[];
  /** Own cycles with at least two employees, for employee cursors. */
  cyclesWithEmployees: string[];
  cursors: { name: string; value: string; list: 'meritCycles' | 'employees' }[];
  /** Delta tokens of its merit cycles delta and of its cycles' employee deltas. */
  deltaTokens: string[];
}

describe('tenant isolation matrix', () => {
  let server: TestServer;
  const tenants: Record<string, Tenant> = {};

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [acmeDataSet(), globexDataSet(), globexSecondCycleDataSet()],
    });
    tenants.acme = {
      org: ACME,
      key: await server.createKey(ACME),
      cycles: acmeDataSet().meritCycles.map((c) => c.id ?? ''),
      employees: employeeIdsOf(acmeDataSet()),
      cyclesWithEmployees: [CYCLE.annual2025],
      cursors: [],
      deltaTokens: [],
    };
    tenants.globex = {
      org: GLOBEX,
      key: await server.createKey(GLOBEX),
      cycles: [CYCLE.globex, GLOBEX_SECOND_CYCLE],
      employees: employeeIdsOf(globexDataSet(), globexSecondCycleDataSet()),
      cyclesWithEmployees: [GLOBEX_SECOND_CYCLE],
      cursors: [],
      deltaTokens: [],
    };
    for (const tenant of Object.values(tenants)) {
      const cursorOf = async (target: string) => {
        const response = await nodeRequest(server.url, target, {
          headers: { 'x-api-key': tenant.key },
        });
        const cursor = (JSON.parse(response.body) as Page<unknown>).nextCursor;
        if (!cursor) throw new Error(`${target} gave no cursor`);
        return cursor;
      };
      tenant.cursors.push(
        {
          name: 'list cursor',
          value: await cursorOf(`${MERIT_CYCLES}?limit=1`),
          list: 'meritCycles',
        },
        {
          name: 'filtered list cursor',
          value: await cursorOf(`${MERIT_CYCLES}?limit=1&gte=2020-01-01`),
          list: 'meritCycles',
        },
        ...(await Promise.all(
          tenant.cyclesWithEmployees.map(async (cycle) => ({
            name: `employees cursor of ${cycle}`,
            value: await cursorOf(`${employeesPath(cycle)}?limit=1`),
            list: 'employees' as const,
          })),
        )),
        {
          name: 'merit cycles delta cursor',
          value: await cursorOf(`${MERIT_CYCLES}/delta?limit=1`),
          list: 'meritCycles',
        },
      );
      for (const target of [
        `${MERIT_CYCLES}/delta?limit=100`,
        ...tenant.cyclesWithEmployees.map((cycle) => `${employeesPath(cycle)}/delta?limit=100`),
      ]) {
        const response = await nodeRequest(server.url, target, {
          headers: { 'x-api-key': tenant.key },
        });
        const { deltaToken } = JSON.parse(response.body) as { deltaToken: string | null };
        if (!deltaToken) throw new Error(`${target} gave no deltaToken`);
        tenant.deltaTokens.push(deltaToken);
      }
    }
  });
  afterAll(() => server.close());

  const expectRefused = (key: string, target: string, status: 400 | 404, message: string) =>
    expectRefusedBy(server.url, key, target, status, message);

  const sides = [
    ['acme', 'globex'],
    ['globex', 'acme'],
  ] as const;

  describe.each(sides)('a key of %s naming %s’s objects', (ownName, otherName) => {
    const own = () => tenants[ownName] as Tenant;
    const other = () => tenants[otherName] as Tenant;
    const endpoints = CYCLE_ENDPOINTS;
    const idForms = ID_FORMS;

    describe.each(endpoints)('%s', (_, pathOf) => {
      it.each(idForms)('with each of its cycle ids (%s) → 404', async (_form, shape) => {
        for (const id of other().cycles) {
          await expectRefused(own().key, pathOf(shape(id)), 404, NOT_FOUND);
        }
      });

      it('with each of its employee ids in place of a cycle id → 404', async () => {
        for (const id of other().employees) {
          await expectRefused(own().key, pathOf(id), 404, NOT_FOUND);
        }
      });
    });

    it('its cursors on our merit cycle list → 400', async () => {
      for (const cursor of other().cursors) {
        for (const query of [`nextCursor=${cursor.value}`, `limit=5&nextCursor=${cursor.value}`]) {
          await expectRefused(own().key, `${MERIT_CYCLES}?${query}`, 400, INVALID_CURSOR);
        }
      }
    });

    it('its delta tokens and cursors on our deltas → 400', async () => {
      const deltas = [
        `${MERIT_CYCLES}/delta`,
        ...own().cyclesWithEmployees.map((cycle) => `${employeesPath(cycle)}/delta`),
      ];
      for (const delta of deltas) {
        for (const token of other().deltaTokens) {
          await expectRefused(
            own().key,
            `${delta}?deltaToken=${encodeURIComponent(token)}`,
            400,
            INVALID_DELTA_TOKEN,
          );
        }
        for (const cursor of other().cursors) {
          await expectRefused(
            own().key,
            `${delta}?nextCursor=${encodeURIComponent(cursor.value)}`,
            400,
            INVALID_CURSOR,
          );
        }
      }
    });

    it('its cursors on our own cycles’ employee lists → 400', async () => {
      for (const cursor of other().cursors) {
        for (const cycle of own().cyclesWithEmployees) {
          await expectRefused(
            own().key,
            `${employeesPath(cycle)}?nextCursor=${cursor.value}`,
            400,
            INVALID_CURSOR,
          );
        }
      }
    });

    it('its cursors on its own cycles’ employee lists → 404 (the cycle is not ours)', async () => {
      for (const cursor of other().cursors) {
        for (const cycle of other().cycles) {
          await expectRefused(
            own().key,
            `${employeesPath(cycle)}?nextCursor=${cursor.value}`,
            404,
            NOT_FOUND,
          );
        }
      }
    });

    it('our own cursors on its cycles’ employee lists → 404', async () => {
      for (const cursor of own().cursors) {
        for (const cycle of other().cycles) {
          await expectRefused(
            own().key,
            `${employeesPath(cycle)}?limit=1&nextCursor=${cursor.value}`,
            404,
            NOT_FOUND,
          );
        }
      }
    });

    it('a foreign answer is indistinguishable from a missing one (same status and message)', async () => {
      const missing = 'mc_00000000-0000-4000-8000-000000000000';
      for (const [, pathOf] of endpoints) {
        const foreign = await nodeRequest(server.url, pathOf(other().cycles[0] ?? ''), {
          headers: { 'x-api-key': own().key },
        });
        const absent = await nodeRequest(server.url, pathOf(missing), {
          headers: { 'x-api-key': own().key },
        });
        const strip = (text: string) => {
          const { timestamp: _t, path: _p, ...rest } = JSON.parse(text) as Record<string, unknown>;
          return rest;
        };
        expect(foreign.status).toBe(absent.status);
        expect(strip(foreign.body)).toEqual(strip(absent.body));
        expect(Object.keys(foreign.headers).sort()).toEqual(Object.keys(absent.headers).sort());
      }
    });

    it('no list we may read ever holds one of its objects', async () => {
      const seen: string[] = [];
      const pages = [
        `${MERIT_CYCLES}?limit=100`,
        `${MERIT_CYCLES}/delta?limit=100`,
        ...own().cycles.flatMap((cycle) => [
          columnsPath(cycle),
          `${employeesPath(cycle)}?limit=100`,
          `${employeesPath(cycle)}/delta?limit=100`,
        ]),
      ];
      for (const target of pages) {
        const response = await nodeRequest(server.url, target, {
          headers: { 'x-api-key': own().key },
        });
        expect(response.status, target).toBe(200);
        seen.push(response.body);
      }
      const text = seen.join('\n');
      for (const id of [...other().cycles, ...other().employees]) {
        expect(text.includes(id), id).toBe(false);
      }
    });
  });
});
