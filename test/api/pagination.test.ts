// Cursor pagination over real HTTP (docs/api-behaviour.md, "Pagination"):
// complete walks, filters carried by the cursor, every way a cursor can be wrong, and
// walks that stay correct while employees are added and removed underneath them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITECH, manyCyclesDataSet } from '../fixtures/api-data-sets.js';
import {
  ACME,
  ACME_LIST_ORDER,
  acmeDataSet,
  CYCLE,
  GLOBEX,
  globexDataSet,
  LARGE_CYCLE,
  largeCycleDataSet,
} from '../fixtures/data-sets.js';
import {
  compareEmployees,
  compareMeritCycles,
  employeesPath,
  errorBody,
  expectedEmployee,
  MERIT_CYCLES,
  type Page,
  walkPages,
} from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const EMPLOYEE_COUNT = 257;
const INVALID_CURSOR =
  'nextCursor is not a valid cursor: pass back the nextCursor of a previous page, unchanged';
const FOREIGN_CURSOR = 'nextCursor belongs to a different list';
const CHANGED_FILTERS =
  'The filters differ from those of the query that issued nextCursor: repeat them unchanged, or send only nextCursor (and limit)';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

type EmployeeInput = NonNullable<
  ReturnType<typeof largeCycleDataSet>['meritCycles'][number]['employees']
>[number];

interface Item {
  id: string;
  firstName: string;
  lastName: string;
}
interface Cycle {
  id: string;
  createdDate: string;
}

const largeEmployees = (): EmployeeInput[] =>
  largeCycleDataSet(EMPLOYEE_COUNT).meritCycles[0]?.employees ?? [];
const expectedLarge = () => largeEmployees().map(expectedEmployee).sort(compareEmployees);

/** Every character position of `text`, changed to another base64url character. */
function flipped(text: string, position: number): string {
  const index = BASE64URL.indexOf(text[position] ?? 'A');
  // XOR 1 changes only the lowest of the six bits a base64 character carries.
  const other = BASE64URL[(index ^ 1) % 64] ?? 'A';
  return `${text.slice(0, position)}${other}${text.slice(position + 1)}`;
}

function splitCursor(cursor: string): { payload: string; signature: string } {
  const [payload, signature] = cursor.split('.');
  if (!payload || !signature) throw new Error(`unexpected cursor shape: ${cursor}`);
  return { payload, signature };
}

describe('pagination', () => {
  let server: TestServer;
  let acme: string;
  let acmeSecondKey: string;
  let globex: string;
  let initech: string;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [
        acmeDataSet(),
        largeCycleDataSet(EMPLOYEE_COUNT),
        globexDataSet(),
        manyCyclesDataSet(30),
      ],
    });
    acme = await server.createKey(ACME);
    acmeSecondKey = await server.createKey(ACME, 'second');
    globex = await server.createKey(GLOBEX);
    initech = await server.createKey(INITECH);
  });
  afterAll(() => server.close());

  async function firstCursor(path: string, key = acme): Promise<string> {
    const response = await server.request(path, { key });
    expect(response.status).toBe(200);
    const page = (await response.json()) as Page<unknown>;
    if (page.nextCursor === null) throw new Error(`${path} has a single page`);
    return page.nextCursor;
  }

  async function expectCursorRefused(path: string, cursor: string, message: string, key = acme) {
    const response = await server.request(`${path}?nextCursor=${encodeURIComponent(cursor)}`, {
      key,
    });
    expect({ status: response.status, body: await response.json() }, cursor).toEqual({
      status: 400,
      body: errorBody(path, message, 400),
    });
  }

  describe('employee walks of the 257-employee cycle', () => {
    it.each([1, 25, 100])(
      'limit=%i returns every employee exactly once, in order, with nextCursor null only on the last page',
      async (limit) => {
        const walk = await walkPages<Item>(server, acme, employeesPath(LARGE_CYCLE), { limit });
        const expected = expectedLarge();
        expect(walk.pages.length).toBe(Math.ceil(EMPLOYEE_COUNT / limit));
        walk.pages.forEach((page, index) => {
          const last = index === walk.pages.length - 1;
          expect(page.data.length).toBe(last ? EMPLOYEE_COUNT - limit * index : limit);
          expect(page.nextCursor === null).toBe(last);
        });
        expect(new Set(walk.items.map((item) => item.id)).size).toBe(EMPLOYEE_COUNT);
        expect(walk.items).toEqual(expected);
      },
    );

    it('continues correctly when limit changes between pages', async () => {
      const limits = [7, 100, 1, 50, 13];
      const ids: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 100; i++) {
        const limit = limits[i % limits.length] ?? 25;
        const query: string = cursor === null ? '' : `&nextCursor=${cursor}`;
        const response = await server.request(
          `${employeesPath(LARGE_CYCLE)}?limit=${limit}${query}`,
          { key: acme },
        );
        const page = (await response.json()) as Page<Item>;
        expect(page.data.length).toBe(Math.min(limit, EMPLOYEE_COUNT - ids.length));
        ids.push(...page.data.map((item) => item.id));
        cursor = page.nextCursor;
        if (cursor === null) break;
      }
      expect(cursor).toBeNull();
      expect(ids).toEqual(expectedLarge().map((employee) => employee.id));
    });

    it('issues URL-safe cursors that work when sent without any encoding', async () => {
      const walk = await walkPages<Item>(server, acme, employeesPath(LARGE_CYCLE), { limit: 25 });
      const cursors = walk.pages.flatMap((page) => (page.nextCursor ? [page.nextCursor] : []));
      expect(cursors.length).toBe(10);
      for (const cursor of cursors) expect(cursor).toMatch(/^[A-Za-z0-9_.~-]+$/);
      const response = await server.request(
        `${employeesPath(LARGE_CYCLE)}?limit=25&nextCursor=${cursors[0]}`,
        { key: acme },
      );
      expect(((await response.json()) as Page<Item>).data).toEqual(walk.pages[1]?.data);
    });

    it('answers the same page for the same cursor every time (stateless, repeatable)', async () => {
      const cursor = await firstCursor(`${employeesPath(LARGE_CYCLE)}?limit=10`);
      const path = `${employeesPath(LARGE_CYCLE)}?limit=10&nextCursor=${cursor}`;
      const first = await (await server.request(path, { key: acme })).json();
      const second = await (await server.request(path, { key: acme })).json();
      expect(second).toEqual(first);
      expect((first as Page<Item>).data).toEqual(expectedLarge().slice(10, 20));
    });

    it('lets another key of the same organisation continue the walk', async () => {
      const cursor = await firstCursor(`${employeesPath(LARGE_CYCLE)}?limit=10`);
      const response = await server.request(
        `${employeesPath(LARGE_CYCLE)}?limit=10&nextCursor=${cursor}`,
        { key: acmeSecondKey },
      );
      expect(response.status).toBe(200);
      expect(((await response.json()) as Page<Item>).data).toEqual(expectedLarge().slice(10, 20));
    });
  });

  describe('merit cycle walks', () => {
    const expectedInitech = () =>
      manyCyclesDataSet(30)
        .meritCycles.map((cycle) => ({
          id: cycle.id ?? '',
          name: cycle.name,
          startDate: cycle.startDate,
          endDate: cycle.endDate,
          createdDate: cycle.createdDate ?? '',
          status: cycle.status,
        }))
        .sort(compareMeritCycles);

    it.each([1, 4, 25])(
      'limit=%i walks 30 cycles with tied createdDates exactly once, in order',
      async (limit) => {
        const walk = await walkPages<Cycle>(server, initech, MERIT_CYCLES, { limit });
        expect(walk.pages.length).toBe(Math.ceil(30 / limit));
        expect(walk.items).toEqual(expectedInitech());
      },
    );

    it('walks Acme’s cycles one at a time across the createdDate tie, ties by id', async () => {
      const walk = await walkPages<Cycle>(server, acme, MERIT_CYCLES, { limit: 1 });
      expect(walk.items.map((cycle) => cycle.id)).toEqual([LARGE_CYCLE, ...ACME_LIST_ORDER]);
    });

    const filteredWalks: [string, number, string[]][] = [
      ['status=finalized', 1, [CYCLE.lateJanuary, CYCLE.february, CYCLE.lastYear]],
      [
        'gte=2025-01-01',
        2,
        [LARGE_CYCLE, CYCLE.annual2025, CYCLE.offset, CYCLE.lateJanuary, CYCLE.february],
      ],
      [
        'startDate[gte]=2025-01-01',
        1,
        [LARGE_CYCLE, CYCLE.annual2025, CYCLE.offset, CYCLE.lateJanuary, CYCLE.february],
      ],
      ['status=active&startDate[gte]=2025-01-02', 1, [LARGE_CYCLE, CYCLE.offset]],
      ['status=finalized&gt=2024-12-31&lte=2025-02-01', 1, [CYCLE.lateJanuary, CYCLE.february]],
    ];

    it.each(filteredWalks)(
      '%s (limit %i) is carried by the cursor alone: later pages send only nextCursor and limit',
      async (query, limit, ids) => {
        const walk = await walkPages<Cycle>(server, acme, MERIT_CYCLES, {
          limit,
          firstQuery: query,
        });
        expect(walk.items.map((cycle) => cycle.id)).toEqual(ids);
        expect(walk.pages.length).toBe(Math.ceil(ids.length / limit));
      },
    );

    it.each(filteredWalks)(
      '%s (limit %i) may be repeated unchanged with every cursor',
      async (query, limit, ids) => {
        const walk = await walkPages<Cycle>(server, acme, MERIT_CYCLES, {
          limit,
          firstQuery: query,
          repeatQuery: query,
        });
        expect(walk.items.map((cycle) => cycle.id)).toEqual(ids);
      },
    );

    it('accepts the same filters repeated in the other form (bracket for flat)', async () => {
      const walk = await walkPages<Cycle>(server, acme, MERIT_CYCLES, {
        limit: 1,
        firstQuery: 'status=active&gte=2025-01-02',
        repeatQuery: 'startDate[gte]=2025-01-02&status=active',
      });
      expect(walk.items.map((cycle) => cycle.id)).toEqual([LARGE_CYCLE, CYCLE.offset]);
    });

    it.each([
      ['status=finalized', 'status=active'],
      ['status=finalized', 'status=finalized&gte=2024-01-01'],
      ['gte=2025-01-01', 'gte=2025-01-02'],
      ['gte=2025-01-01', 'gt=2025-01-01'],
      ['gte=2025-01-01', 'startDate[lte]=2025-12-31'],
      ['gte=2025-01-01&status=active', 'gte=2025-01-01'],
      ['', 'status=active'],
      ['', 'lte=9999-12-31'],
    ])('a cursor from "%s" with the filters changed to "%s" → 400', async (first, changed) => {
      const cursor = await firstCursor(`${MERIT_CYCLES}?limit=1${first ? `&${first}` : ''}`);
      const response = await server.request(
        `${MERIT_CYCLES}?limit=1&nextCursor=${cursor}&${changed}`,
        { key: acme },
      );
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 400,
        body: errorBody(MERIT_CYCLES, CHANGED_FILTERS, 400),
      });
    });
  });

  describe('cursors that are refused with 400 and the standard body', () => {
    let cycleCursor: string;
    let employeeCursor: string;

    beforeAll(async () => {
      cycleCursor = await firstCursor(`${MERIT_CYCLES}?limit=1`);
      employeeCursor = await firstCursor(`${employeesPath(LARGE_CYCLE)}?limit=1`);
    });

    it('one character of the payload changed, at positions across the whole payload', async () => {
      for (const cursor of [cycleCursor, employeeCursor]) {
        const { payload } = splitCursor(cursor);
        const path = cursor === cycleCursor ? MERIT_CYCLES : employeesPath(LARGE_CYCLE);
        // Every 7th position, and the first and last: all parts of the encoded JSON.
        const positions = new Set([0, payload.length - 1]);
        for (let i = 0; i < payload.length; i += 7) positions.add(i);
        for (const i of positions) {
          await expectCursorRefused(path, flipped(cursor, i), INVALID_CURSOR);
        }
      }
    });

    it('any one character of the signature changed', async () => {
      const { payload, signature } = splitCursor(cycleCursor);
      for (let i = 0; i < signature.length; i++) {
        await expectCursorRefused(
          MERIT_CYCLES,
          `${payload}.${flipped(signature, i)}`,
          INVALID_CURSOR,
        );
      }
    });

    it('characters added to the signature', async () => {
      const { payload, signature } = splitCursor(cycleCursor);
      for (const altered of [
        `${cycleCursor}=`,
        `${cycleCursor}==`,
        `${cycleCursor}!`,
        `${cycleCursor} `,
        `${cycleCursor}A`,
        `${payload}.${signature.slice(0, 10)}*${signature.slice(10)}`,
        `${payload}. ${signature}`,
      ]) {
        await expectCursorRefused(MERIT_CYCLES, altered, INVALID_CURSOR);
      }
    });

    it('an edited payload that points elsewhere, keeping the old signature', async () => {
      const { payload, signature } = splitCursor(employeeCursor);
      const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
        a: unknown;
      };
      body.a = ['Z', 'Z', 'mce_ffffffff-ffff-4fff-bfff-ffffffffffff'];
      const forged = `${Buffer.from(JSON.stringify(body)).toString('base64url')}.${signature}`;
      await expectCursorRefused(employeesPath(LARGE_CYCLE), forged, INVALID_CURSOR);
    });

    it.each([
      ['the last character removed', (c: string) => c.slice(0, -1)],
      ['the signature removed', (c: string) => `${splitCursor(c).payload}.`],
      ['the signature and the dot removed', (c: string) => splitCursor(c).payload],
      ['cut in half', (c: string) => c.slice(0, Math.floor(c.length / 2))],
      ['only the signature', (c: string) => splitCursor(c).signature],
      ['an extra segment', (c: string) => `${c}.${splitCursor(c).signature}`],
    ])('a truncated or reshaped cursor: %s', async (_, alter) => {
      await expectCursorRefused(MERIT_CYCLES, alter(cycleCursor), INVALID_CURSOR);
    });

    it.each([
      'abc',
      '.',
      '..',
      'null',
      '{}',
      '0',
      '\u2713',
      `${Buffer.from('{"v":1,"s":"meritCycles:","f":{},"a":null}').toString('base64url')}.${'A'.repeat(22)}`,
    ])('garbage: %j', async (garbage) => {
      await expectCursorRefused(MERIT_CYCLES, garbage, INVALID_CURSOR);
    });

    // Over the 2,048 characters a cursor may have, under the 8 KiB a URL may have (a longer
    // URL is refused earlier, with 414: test/api/abuse-limits.test.ts).
    it('a 3,000-character cursor', async () => {
      await expectCursorRefused(MERIT_CYCLES, 'A'.repeat(3_000), INVALID_CURSOR);
      const padded = `${cycleCursor}${'A'.repeat(3_000 - cycleCursor.length)}`;
      expect(padded.length).toBe(3_000);
      await expectCursorRefused(MERIT_CYCLES, padded, INVALID_CURSOR);
    });

    it('a merit cycle list cursor on the employees list, and the reverse', async () => {
      await expectCursorRefused(employeesPath(LARGE_CYCLE), cycleCursor, FOREIGN_CURSOR);
      await expectCursorRefused(MERIT_CYCLES, employeeCursor, FOREIGN_CURSOR);
    });

    it('an employees cursor of another merit cycle of the same organisation', async () => {
      await expectCursorRefused(employeesPath(CYCLE.midYear), employeeCursor, FOREIGN_CURSOR);
      await expectCursorRefused(employeesPath(CYCLE.annual2025), employeeCursor, FOREIGN_CURSOR);
    });

    it('a cursor issued to another organisation’s key', async () => {
      const initechCycles = await firstCursor(`${MERIT_CYCLES}?limit=1`, initech);
      await expectCursorRefused(MERIT_CYCLES, initechCycles, INVALID_CURSOR);
      const globexEmployees = await firstCursor(`${employeesPath(CYCLE.globex)}?limit=1`, globex);
      await expectCursorRefused(employeesPath(LARGE_CYCLE), globexEmployees, INVALID_CURSOR);
      // And the other way round: Acme's cursors mean nothing to Globex.
      await expectCursorRefused(MERIT_CYCLES, cycleCursor, INVALID_CURSOR, globex);
      await expectCursorRefused(
        employeesPath(CYCLE.globex),
        employeeCursor,
        INVALID_CURSOR,
        globex,
      );
    });
  });
});

describe('a walk while employees are added and removed', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [largeCycleDataSet(EMPLOYEE_COUNT)] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  function newEmployee(n: number, firstName: string, lastName: string): EmployeeInput {
    return {
      id: `mce_60000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      email: `newcomer${n}@acme.example`,
      firstName,
      lastName,
      currencyCode: 'USD',
      eligibilityStatus: 'eligible',
      columns: { department: { name: 'Department', type: 'text', value: 'New' } },
    };
  }

  /** Re-imports the large cycle with `employees`, removing every employee it omits. */
  async function reimport(employees: EmployeeInput[]) {
    const dataSet = largeCycleDataSet(EMPLOYEE_COUNT);
    const cycle = dataSet.meritCycles[0];
    if (!cycle) throw new Error('large data set without its cycle');
    cycle.employees = employees;
    await server.load(dataSet, { prune: true });
  }

  it('returns every employee that existed unchanged for the whole walk exactly once, in order', async () => {
    const initial = largeEmployees().sort(compareEmployees);
    const idAt = (index: number) => initial[index]?.id ?? '';
    const path = employeesPath(LARGE_CYCLE);
    const returned: Item[] = [];
    let cursor: string | null = null;
    const nextPage = async () => {
      const query: string = cursor === null ? '' : `&nextCursor=${cursor}`;
      const response = await server.request(`${path}?limit=20${query}`, { key });
      expect(response.status).toBe(200);
      const page = (await response.json()) as Page<Item>;
      returned.push(...page.data);
      cursor = page.nextCursor;
    };

    await nextPage();
    await nextPage();
    expect(returned.length).toBe(40);

    // 1. Remove employees already returned and some not yet reached; add employees before,
    //    inside and after the walk's position; move one from ahead to behind, one from
    //    behind to ahead, and change one in place.
    const removedAhead = new Set([idAt(45), idAt(60), idAt(100), idAt(200), idAt(256)]);
    const removedBehind = new Set([idAt(3), idAt(10), idAt(17), idAt(25), idAt(39)]);
    const movedBehind = idAt(150);
    const movedAhead = idAt(30);
    const changedInPlace = idAt(120);
    const firstChange = initial
      .filter((employee) => !removedAhead.has(employee.id ?? ''))
      .filter((employee) => !removedBehind.has(employee.id ?? ''))
      .map((employee) => {
        if (employee.id === movedBehind) return { ...employee, lastName: 'Aardvark' };
        if (employee.id === movedAhead) return { ...employee, lastName: 'Zulu' };
        if (employee.id === changedInPlace) return { ...employee, preferredName: 'Changed' };
        return employee;
      });
    firstChange.push(
      newEmployee(1, 'Alex', 'Aaron'),
      newEmployee(2, 'Alex', 'Nguyen'),
      newEmployee(3, 'Zoë', 'Smith'),
      newEmployee(4, 'Alex', '\u00C5berg'),
      newEmployee(5, 'Sam', 'Zzyzx'),
    );
    await reimport(firstChange);

    for (let i = 0; i < 4; i++) await nextPage();

    // 2. Another round: remove more employees ahead, and add more.
    const removedLater = new Set(
      firstChange
        .slice()
        .sort(compareEmployees)
        .slice(-40)
        .filter((_, index) => index % 3 === 0)
        .map((employee) => employee.id ?? ''),
    );
    const secondChange = firstChange.filter((employee) => !removedLater.has(employee.id ?? ''));
    secondChange.push(newEmployee(6, 'Chris', 'M\u00FCller'), newEmployee(7, 'Alex', 'Jones'));
    await reimport(secondChange);

    for (let i = 0; i < 100 && cursor !== null; i++) await nextPage();
    expect(cursor).toBeNull();

    const touched = new Set([
      ...removedAhead,
      ...removedBehind,
      ...removedLater,
      movedBehind,
      movedAhead,
      changedInPlace,
    ]);
    const unchanged = initial.filter((employee) => !touched.has(employee.id ?? ''));
    expect(unchanged.length).toBeGreaterThan(200);
    const counts = new Map<string, number>();
    for (const item of returned) counts.set(item.id, (counts.get(item.id) ?? 0) + 1);
    for (const employee of unchanged) {
      expect(counts.get(employee.id ?? ''), employee.id).toBe(1);
    }
    // Each unchanged employee is served as loaded.
    const served = new Map(returned.map((item) => [item.id, item]));
    for (const employee of unchanged) {
      expect(served.get(employee.id ?? '')).toEqual(expectedEmployee(employee));
    }
    // Removed before the walk reached them: never served.
    for (const id of removedAhead) expect(counts.get(id), id).toBeUndefined();
    // The walk as a whole stays in the documented order.
    for (let i = 1; i < returned.length; i++) {
      const previous = returned[i - 1];
      const current = returned[i];
      if (!previous || !current) throw new Error('hole in the walk');
      expect(compareEmployees(previous, current), `${previous.id} then ${current.id}`).toBeLessThan(
        0,
      );
    }
  });
});
