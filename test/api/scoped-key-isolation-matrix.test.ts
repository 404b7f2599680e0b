// The isolation matrix again, for keys with a cycle scope (docs/api-keys.md): every
// endpoint × every way of naming what the key may not read — its organisation's cycles
// outside the scope and another organisation's (as given, percent-encoded, upper-cased),
// employee ids in place of cycle ids, the cursors of every other reader (a full key of the
// same organisation, a key with another scope, keys with the same cycles but hidden
// columns or hidden column types, another organisation's key) — with GET and HEAD. Each answer is the 404 of a
// cycle that does not exist, or the 400 of a cursor that is not ours; no list holds an
// object out of scope. Runs on every database.
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
  columnsPath,
  cyclePath,
  employeesPath,
  MERIT_CYCLES,
  type Page,
  ratesPath,
  walkPages,
} from '../helpers/api-expectations.js';
import {
  CYCLE_ENDPOINTS,
  expectRefused as expectRefusedBy,
  ID_FORMS,
  INVALID_CURSOR,
  CYCLE_NOT_FOUND as NOT_FOUND,
} from '../helpers/isolation.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const MISSING_CYCLE = 'mc_00000000-0000-4000-8000-000000000000';

type DataSet = ReturnType<typeof acmeDataSet>;
const employeeIdsOf = (dataSets: DataSet[], cycles?: string[]) =>
  dataSets.flatMap((d) =>
    d.meritCycles
      .filter((c) => cycles === undefined || cycles.includes(c.id ?? ''))
      .flatMap((c) => (c.employees ?? []).map((e) => e.id ?? '')),
  );

const ALL_ACME_CYCLES = acmeDataSet().meritCycles.map((c) => c.id ?? '');
const GLOBEX_CYCLES = [CYCLE.globex, GLOBEX_SECOND_CYCLE];

interface Reader {
  name: string;
  key: string;
  /** The cycles it may read; every Acme cycle for a full key. */
  cycles: string[];
  /** Its cycles with at least two employees, for employee cursors. */
  cyclesWithEmployees: string[];
  cursors: { name: string; value: string }[];
}

describe('scoped key isolation matrix', () => {
  let server: TestServer;
  const readers: Record<string, Reader> = {};

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [acmeDataSet(), globexDataSet(), globexSecondCycleDataSet()],
    });
    const scopedCycles = [CYCLE.annual2025, CYCLE.midYear, CYCLE.lateJanuary];
    const add = async (
      name: string,
      org: string,
      cycles: string[],
      cyclesWithEmployees: string[],
      restrictions: { cycles?: string[]; hiddenColumns?: string[]; hiddenColumnTypes?: string[] },
    ) => {
      readers[name] = {
        name,
        key: await server.createKey(org, name, restrictions),
        cycles,
        cyclesWithEmployees,
        cursors: [],
      };
    };
    await add('scoped', ACME, scopedCycles, [CYCLE.annual2025, CYCLE.midYear], {
      cycles: scopedCycles,
    });
    await add('narrow', ACME, [CYCLE.midYear, CYCLE.offset], [CYCLE.midYear], {
      cycles: [CYCLE.midYear, CYCLE.offset],
      hiddenColumns: ['employee'],
    });
    // The same cycles as `scoped`, fewer columns: another reader all the same.
    await add('scoped-hiding', ACME, scopedCycles, [CYCLE.annual2025, CYCLE.midYear], {
      cycles: scopedCycles,
      hiddenColumns: ['department'],
    });
    // The same cycles again, hiding every number and composite column (tenure, employee):
    // a reader of its own, whose cursors no other reader may use.
    await add('typed', ACME, scopedCycles, [CYCLE.annual2025, CYCLE.midYear], {
      cycles: scopedCycles,
      hiddenColumnTypes: ['number', 'composite'],
    });
    await add('full', ACME, ALL_ACME_CYCLES, [CYCLE.annual2025, CYCLE.midYear], {});
    await add('globex', GLOBEX, GLOBEX_CYCLES, [GLOBEX_SECOND_CYCLE], {});

    for (const reader of Object.values(readers)) {
      const cursorOf = async (target: string) => {
        const response = await nodeRequest(server.url, target, {
          headers: { 'x-api-key': reader.key },
        });
        const cursor = (JSON.parse(response.body) as Page<unknown>).nextCursor;
        if (!cursor) throw new Error(`${reader.name}: ${target} gave no cursor`);
        return cursor;
      };
      reader.cursors.push(
        { name: 'list', value: await cursorOf(`${MERIT_CYCLES}?limit=1`) },
        { name: 'filtered list', value: await cursorOf(`${MERIT_CYCLES}?limit=1&gte=2020-01-01`) },
      );
      for (const cycle of reader.cyclesWithEmployees) {
        reader.cursors.push({
          name: `employees of ${cycle}`,
          value: await cursorOf(`${employeesPath(cycle)}?limit=1`),
        });
      }
    }
  });
  afterAll(() => server?.close());

  const expectRefused = (key: string, target: string, status: 400 | 404, message: string) =>
    expectRefusedBy(server.url, key, target, status, message);
  const endpoints = CYCLE_ENDPOINTS;
  const idForms = ID_FORMS;

  describe.each(['scoped', 'narrow', 'typed'])('a key scoped to some cycles (%s)', (name) => {
    const own = () => readers[name] as Reader;
    const outOfScope = () =>
      [...ALL_ACME_CYCLES, ...GLOBEX_CYCLES].filter((id) => !own().cycles.includes(id));
    const others = () => Object.values(readers).filter((reader) => reader.name !== name);

    describe.each(endpoints)('%s', (_, pathOf) => {
      it.each(idForms)('with each cycle out of its scope (%s) → 404', async (_form, shape) => {
        expect(outOfScope().length).toBeGreaterThanOrEqual(5);
        for (const id of outOfScope()) {
          await expectRefused(own().key, pathOf(shape(id)), 404, NOT_FOUND);
        }
      });

      it('with employee ids in place of a cycle id → 404', async () => {
        const employees = employeeIdsOf([acmeDataSet(), globexDataSet()]);
        for (const id of employees) await expectRefused(own().key, pathOf(id), 404, NOT_FOUND);
      });

      it('reads every cycle in its scope', async () => {
        for (const id of own().cycles) {
          const response = await server.request(pathOf(id), { key: own().key });
          expect(response.status, id).toBe(200);
        }
      });
    });

    it('the cursors of every other reader on its merit cycle list → 400', async () => {
      for (const reader of others()) {
        for (const cursor of reader.cursors) {
          for (const query of [
            `nextCursor=${cursor.value}`,
            `limit=5&nextCursor=${cursor.value}`,
          ]) {
            await expectRefused(own().key, `${MERIT_CYCLES}?${query}`, 400, INVALID_CURSOR);
          }
        }
      }
    });

    it('the cursors of every other reader on its cycles’ employee lists → 400', async () => {
      for (const reader of others()) {
        for (const cursor of reader.cursors) {
          for (const cycle of own().cyclesWithEmployees) {
            await expectRefused(
              own().key,
              `${employeesPath(cycle)}?nextCursor=${cursor.value}`,
              400,
              INVALID_CURSOR,
            );
          }
        }
      }
    });

    it('any cursor, its own included, on a cycle out of its scope → 404', async () => {
      for (const reader of Object.values(readers)) {
        for (const cursor of reader.cursors) {
          for (const cycle of outOfScope()) {
            await expectRefused(
              own().key,
              `${employeesPath(cycle)}?limit=1&nextCursor=${cursor.value}`,
              404,
              NOT_FOUND,
            );
          }
        }
      }
    });

    it('its cursors are refused (400) to every other reader', async () => {
      for (const reader of others()) {
        for (const cursor of own().cursors) {
          await expectRefused(
            reader.key,
            `${MERIT_CYCLES}?nextCursor=${cursor.value}`,
            400,
            INVALID_CURSOR,
          );
        }
      }
    });

    it('a cycle out of its scope is indistinguishable from one that does not exist (status, body, headers)', async () => {
      const strip = (text: string) => {
        const { timestamp: _t, path: _p, ...rest } = JSON.parse(text) as Record<string, unknown>;
        return rest;
      };
      for (const [, pathOf] of endpoints) {
        for (const id of outOfScope()) {
          const hidden = await nodeRequest(server.url, pathOf(id), {
            headers: { 'x-api-key': own().key },
          });
          const absent = await nodeRequest(server.url, pathOf(MISSING_CYCLE), {
            headers: { 'x-api-key': own().key },
          });
          expect(hidden.status).toBe(absent.status);
          expect(strip(hidden.body)).toEqual(strip(absent.body));
          expect(Object.keys(hidden.headers).sort()).toEqual(Object.keys(absent.headers).sort());
        }
      }
    });

    it('its merit cycle list holds exactly its cycles, in list order, through every page and filter', async () => {
      const expected = ACME_LIST_ORDER.filter((id) => own().cycles.includes(id));
      const walk = await walkPages<{ id: string }>(server, own().key, MERIT_CYCLES, { limit: 1 });
      expect(walk.items.map((c) => c.id)).toEqual(expected);
      const all = await walkPages<{ id: string }>(server, own().key, MERIT_CYCLES, { limit: 100 });
      expect(all.items.map((c) => c.id)).toEqual(expected);
      // A filter that every Acme cycle but the 2024 one matches, and one on status.
      const filters: [string, (id: string) => boolean][] = [
        ['gte=2024-06-01', (id) => id !== CYCLE.lastYear],
        [
          'status=finalized',
          (id) => ([CYCLE.lateJanuary, CYCLE.february, CYCLE.lastYear] as string[]).includes(id),
        ],
        ['startDate[lt]=2025-01-01&status=inactive', (id) => id === CYCLE.midYear],
      ];
      for (const [query, matches] of filters) {
        const filtered = await walkPages<{ id: string }>(server, own().key, MERIT_CYCLES, {
          limit: 1,
          firstQuery: query,
        });
        expect(
          filtered.items.map((c) => c.id),
          query,
        ).toEqual(expected.filter(matches));
      }
    });

    it('the column schemas of its cycles hold every column but those it hides', async () => {
      const hidden =
        { narrow: ['employee'], 'scoped-hiding': ['department'], typed: ['employee', 'tenure'] }[
          name
        ] ?? [];
      for (const cycle of own().cyclesWithEmployees) {
        const full = await server.request(columnsPath(cycle), { key: readers.full?.key ?? '' });
        const mine = await server.request(columnsPath(cycle), { key: own().key });
        expect(mine.status, cycle).toBe(200);
        const keys = (response: unknown) =>
          (response as { data: { key: string }[] }).data.map((column) => column.key);
        const all = keys(await full.json());
        expect(all, cycle).toEqual(expect.arrayContaining(['department', 'employee']));
        expect(keys(await mine.json()), cycle).toEqual(all.filter((key) => !hidden.includes(key)));
      }
    });

    it('no answer it can get holds anything out of its scope', async () => {
      const seen: string[] = [];
      const pages = [
        `${MERIT_CYCLES}?limit=100`,
        `${MERIT_CYCLES}/delta?limit=100`,
        ...own().cycles.flatMap((cycle) => [
          cyclePath(cycle),
          ratesPath(cycle),
          columnsPath(cycle),
          `${employeesPath(cycle)}?limit=100`,
          `${employeesPath(cycle)}/delta?limit=100`,
        ]),
      ];
      for (const target of pages) {
        const response = await server.request(target, { key: own().key });
        expect(response.status, target).toBe(200);
        seen.push(await response.text());
      }
      const text = seen.join('\n');
      const outside = [
        ...outOfScope(),
        ...employeeIdsOf([acmeDataSet(), globexDataSet()], outOfScope()),
      ];
      for (const id of outside) expect(text.includes(id), id).toBe(false);
    });
  });
});
