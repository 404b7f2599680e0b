// The two delta endpoints (docs/delta-sync.md) over real HTTP, on the test database:
// the first walk is the list; a later walk holds exactly what an import or a removal
// changed, once each, in its latest state; tokens are bound to their organisation, key
// scope, endpoint and cycle; old tokens get 410. Each test loads its own organisation
// state through the real import path.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CHANGE_RETENTION_DAYS } from '../../src/config.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { removeMeritCycle } from '../../src/modules/merit-cycles/removal.js';
import {
  ACME,
  ADA_ID,
  acmeDataSet,
  CYCLE,
  GLOBEX,
  globexDataSet,
  LARGE_CYCLE,
  largeCycleDataSet,
} from '../fixtures/data-sets.js';
import {
  employeesPath,
  errorBody,
  MERIT_CYCLES,
  walkPages,
  withCharacterChanged,
} from '../helpers/api-expectations.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const CYCLES_DELTA = `${MERIT_CYCLES}/delta`;
const employeesDelta = (cycle: string) => `${employeesPath(cycle)}/delta`;
const DAY_MS = 86_400_000;

interface Item {
  id: string;
  removed?: true;
  [field: string]: unknown;
}
interface DeltaPage {
  data: Item[];
  nextCursor: string | null;
  deltaToken: string | null;
}
interface DeltaWalk {
  pages: DeltaPage[];
  items: Item[];
  token: string;
}

type Employee = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];

let server: TestServer;
let clock: TestClock;
let key: string;

beforeEach(async () => {
  clock = new TestClock();
  server = await startTestServer({ dataSets: [acmeDataSet(), globexDataSet()], now: clock.now });
  key = await server.createKey(ACME, 'delta');
});
afterEach(() => server.close());

/** Follows a delta walk to its last page: every page but the last has only nextCursor. */
async function walkDelta(
  path: string,
  options: { token?: string; limit?: number; key?: string } = {},
): Promise<DeltaWalk> {
  const pages: DeltaPage[] = [];
  const limit = options.limit ?? 25;
  let query = `limit=${limit}${options.token ? `&deltaToken=${encodeURIComponent(options.token)}` : ''}`;
  for (let i = 0; i < 1_000; i++) {
    const response = await server.request(`${path}?${query}`, { key: options.key ?? key });
    if (response.status !== 200) {
      throw new Error(`page ${i + 1} of ${path}: ${response.status} ${await response.text()}`);
    }
    const page = (await response.json()) as DeltaPage;
    pages.push(page);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    if (page.nextCursor === null) {
      expect(page.deltaToken).toEqual(expect.any(String));
      return { pages, items: pages.flatMap((p) => p.data), token: page.deltaToken as string };
    }
    expect(page.deltaToken).toBeNull();
    expect(page.data).toHaveLength(limit);
    query = `limit=${limit}&nextCursor=${encodeURIComponent(page.nextCursor)}`;
  }
  throw new Error(`${path}: no last page`);
}

/** The full list, walked with nextCursor. */
async function list(path: string): Promise<Item[]> {
  return (await walkPages<Item>(server, key, path, { limit: 100 })).items;
}

const byId = (items: Item[]) => [...items].sort((a, b) => (a.id < b.id ? -1 : 1));

/** Acme's data set with `edit` applied to the employees of its 2025 annual cycle. */
function acmeWith(edit: (employees: Employee[]) => Employee[]): DataSetInput {
  const dataSet = acmeDataSet();
  const cycle = dataSet.meritCycles.find((c) => c.id === CYCLE.annual2025);
  if (!cycle?.employees) throw new Error('fixture changed');
  cycle.employees = edit(cycle.employees);
  return dataSet;
}

function newEmployee(n: number): Employee {
  return {
    id: `mce_10000000-0000-4000-8000-0000000c000${n}`,
    email: `new${n}@acme.example`,
    firstName: 'New',
    lastName: `Hire ${n}`,
    currencyCode: 'USD',
    eligibilityStatus: 'eligible',
    columns: {},
  };
}

describe('the first walk (no deltaToken)', () => {
  it('is the list: the same items in the same shapes, for merit cycles and for employees', async () => {
    const cycles = await walkDelta(CYCLES_DELTA);
    expect(byId(cycles.items)).toStrictEqual(byId(await list(MERIT_CYCLES)));
    for (const limit of [1, 25, 100]) {
      const employees = await walkDelta(employeesDelta(CYCLE.annual2025), { limit });
      expect(byId(employees.items)).toStrictEqual(
        byId(await list(employeesPath(CYCLE.annual2025))),
      );
    }
  });

  it('pages a large cycle with limits 1, 25 and 100: every employee once, a token only at the end', async () => {
    await server.load(largeCycleDataSet(230));
    const expected = byId(await list(employeesPath(LARGE_CYCLE)));
    expect(expected).toHaveLength(230);
    for (const limit of [1, 25, 100]) {
      const walk = await walkDelta(employeesDelta(LARGE_CYCLE), { limit });
      expect(walk.pages).toHaveLength(Math.ceil(230 / limit));
      expect(byId(walk.items)).toStrictEqual(expected);
    }
  });
});

describe('a walk from a deltaToken', () => {
  it('after an identical re-import: one empty page with a fresh deltaToken', async () => {
    const first = await walkDelta(employeesDelta(CYCLE.annual2025));
    const cycles = await walkDelta(CYCLES_DELTA);
    clock.advance(1_000);
    const summary = await server.load(acmeDataSet());
    expect(summary.employees).toMatchObject({ created: 0, updated: 0, removed: 0 });

    for (const [path, token] of [
      [employeesDelta(CYCLE.annual2025), first.token],
      [CYCLES_DELTA, cycles.token],
    ] as const) {
      const next = await walkDelta(path, { token });
      expect(next.pages).toStrictEqual([
        { data: [], nextCursor: null, deltaToken: expect.any(String) },
      ]);
      expect(next.token).not.toBe(token);
    }
  });

  it('after an import that creates 2, changes 3 and prunes 1: exactly those 6, in change order', async () => {
    await server.load(largeCycleDataSet(10));
    const before = await walkDelta(employeesDelta(LARGE_CYCLE));
    const dataSet = largeCycleDataSet(10);
    const cycle = dataSet.meritCycles[0] as DataSetInput['meritCycles'][number];
    const [gone, ...kept] = (cycle.employees ?? []).map((e) => e.id as string);
    const changed = kept.slice(0, 3);
    cycle.employees = [
      ...(cycle.employees ?? [])
        .filter((e) => e.id !== gone)
        .map((e) =>
          changed.includes(e.id as string) ? { ...e, lastName: `${e.lastName} II` } : e,
        ),
      { ...newEmployee(1), id: 'mce_30000000-0000-4000-8000-00000000c001' },
      { ...newEmployee(2), id: 'mce_30000000-0000-4000-8000-00000000c002' },
    ];
    const summary = await server.load(dataSet, { prune: true });
    expect(summary.employees).toStrictEqual({ created: 2, updated: 3, unchanged: 6, removed: 1 });

    const delta = await walkDelta(employeesDelta(LARGE_CYCLE), { token: before.token });
    const now = await list(employeesPath(LARGE_CYCLE));
    const served = (id: string) => now.find((e) => e.id === id);
    const expected = [
      ...[
        ...changed,
        'mce_30000000-0000-4000-8000-00000000c001',
        'mce_30000000-0000-4000-8000-00000000c002',
      ].map(served),
      { id: gone, removed: true },
    ];
    expect(byId(delta.items)).toStrictEqual(byId(expected as Item[]));
    // In the order the import made the changes: its removals, then what it wrote (here
    // in file order); the same whatever the page size.
    expect(delta.items.map((item) => item.id)).toStrictEqual([
      gone,
      ...changed,
      'mce_30000000-0000-4000-8000-00000000c001',
      'mce_30000000-0000-4000-8000-00000000c002',
    ]);
    const onePerPage = await walkDelta(employeesDelta(LARGE_CYCLE), {
      token: before.token,
      limit: 1,
    });
    expect(onePerPage.items).toStrictEqual(delta.items);

    // And the walk after that one is empty.
    const after = await walkDelta(employeesDelta(LARGE_CYCLE), { token: delta.token });
    expect(after.items).toStrictEqual([]);
  });

  it('an item changed twice between two walks comes once, in its last state, after items changed before it', async () => {
    const before = await walkDelta(employeesDelta(CYCLE.annual2025));
    const other = 'mce_10000000-0000-4000-8000-00000000a002';
    const named = (names: Record<string, string>) =>
      acmeWith((employees) =>
        employees.map((e) => ({ ...e, firstName: names[e.id as string] ?? e.firstName })),
      );
    await server.load(named({ [ADA_ID]: 'Augusta' }));
    await server.load(named({ [ADA_ID]: 'Augusta', [other]: 'Gracie' }));
    await server.load(named({ [ADA_ID]: 'Augusta Ada', [other]: 'Gracie' }));

    const delta = await walkDelta(employeesDelta(CYCLE.annual2025), { token: before.token });
    expect(delta.items.map((i) => i.id)).toStrictEqual([other, ADA_ID]);
    expect(delta.items[1]).toMatchObject({ id: ADA_ID, firstName: 'Augusta Ada' });
  });

  it("a change of a merit cycle's exchange rates puts the cycle in the merit cycles delta", async () => {
    const before = await walkDelta(CYCLES_DELTA);
    const dataSet = acmeDataSet();
    const cycle = dataSet.meritCycles.find((c) => c.id === CYCLE.annual2025);
    if (!cycle) throw new Error('fixture changed');
    cycle.exchangeRates = { ...cycle.exchangeRates, EUR: 0.95 };
    await server.load(dataSet);

    const delta = await walkDelta(CYCLES_DELTA, { token: before.token });
    const listed = (await list(MERIT_CYCLES)).find((c) => c.id === CYCLE.annual2025);
    expect(delta.items).toStrictEqual([listed]);
  });

  it('a removed merit cycle: a removal in the merit cycles delta; its employee delta answers 404', async () => {
    const cycles = await walkDelta(CYCLES_DELTA);
    const employees = await walkDelta(employeesDelta(CYCLE.midYear));
    const removed = await removeMeritCycle(server.database, CYCLE.midYear, {
      changeRetentionDays: DEFAULT_CHANGE_RETENTION_DAYS,
    });
    expect(removed).toMatchObject({ id: CYCLE.midYear, organization: ACME });

    const delta = await walkDelta(CYCLES_DELTA, { token: cycles.token });
    expect(delta.items).toStrictEqual([{ id: CYCLE.midYear, removed: true }]);
    const path = employeesDelta(CYCLE.midYear);
    const response = await server.request(
      `${path}?deltaToken=${encodeURIComponent(employees.token)}`,
      { key },
    );
    expect(response.status).toBe(404);
    expect(await response.json()).toStrictEqual(errorBody(path, 'Merit cycle not found', 404));

    // Imported again under its id: a new cycle, in the delta in full; the old employee
    // token cannot be answered (its removals are gone with the cycle): 410.
    await server.load(acmeDataSet());
    const again = await walkDelta(CYCLES_DELTA, { token: delta.token });
    expect(again.items).toStrictEqual([
      (await list(MERIT_CYCLES)).find((c) => c.id === CYCLE.midYear),
    ]);
    const stale = await server.request(
      `${path}?deltaToken=${encodeURIComponent(employees.token)}`,
      {
        key,
      },
    );
    expect(stale.status).toBe(410);
  });

  it('an employee removed and imported again under its id comes once, in full', async () => {
    const before = await walkDelta(employeesDelta(CYCLE.annual2025));
    await server.load(
      acmeWith((employees) => employees.filter((e) => e.id !== ADA_ID)),
      {
        prune: true,
      },
    );
    await server.load(acmeDataSet());
    const delta = await walkDelta(employeesDelta(CYCLE.annual2025), { token: before.token });
    const ada = (await list(employeesPath(CYCLE.annual2025))).find((e) => e.id === ADA_ID);
    expect(delta.items).toStrictEqual([ada]);
  });

  it('pages a delta with limits 1, 25 and 100', async () => {
    await server.load(largeCycleDataSet(120));
    const before = await walkDelta(employeesDelta(LARGE_CYCLE));
    const dataSet = largeCycleDataSet(120);
    const employees = dataSet.meritCycles[0]?.employees ?? [];
    // Every other one of the first 110 changed (55), the last 10 pruned.
    dataSet.meritCycles[0] = {
      ...(dataSet.meritCycles[0] as DataSetInput['meritCycles'][number]),
      employees: employees
        .slice(0, 110)
        .map((e, i) => (i % 2 === 0 ? { ...e, firstName: `${e.firstName}!` } : e)),
    };
    await server.load(dataSet, { prune: true });
    const expected = new Set([
      ...employees.filter((_, i) => i < 110 && i % 2 === 0).map((e) => e.id),
      ...employees.slice(110).map((e) => e.id),
    ]);
    for (const limit of [1, 25, 100]) {
      const delta = await walkDelta(employeesDelta(LARGE_CYCLE), { token: before.token, limit });
      expect(delta.items).toHaveLength(65);
      expect(new Set(delta.items.map((i) => i.id))).toStrictEqual(expected);
      expect(delta.items.filter((i) => i.removed)).toHaveLength(10);
    }
  });
});

describe('tokens and cursors', () => {
  async function refused(
    path: string,
    query: string,
    status: number,
    message: string,
    withKey = key,
  ) {
    const response = await server.request(`${path}?${query}`, { key: withKey });
    expect(response.status).toBe(status);
    expect(await response.json()).toStrictEqual(errorBody(path, message, status));
  }
  const INVALID =
    'deltaToken is not a valid delta token: pass back the deltaToken of the last page of a delta, unchanged';
  const FOREIGN = 'deltaToken belongs to a different delta';
  const token = (t: string) => `deltaToken=${encodeURIComponent(t)}`;

  it('a tampered, foreign-organisation, other-cycle or other-endpoint token, or a cursor, is 400', async () => {
    const annual = await walkDelta(employeesDelta(CYCLE.annual2025));
    const cycles = await walkDelta(CYCLES_DELTA);
    const paged = await walkDelta(CYCLES_DELTA, { limit: 1 });
    const globexKey = await server.createKey(GLOBEX, 'other org');
    const globexCycles = await walkDelta(CYCLES_DELTA, { key: globexKey });

    const tampered = withCharacterChanged(annual.token, 10);
    await refused(employeesDelta(CYCLE.annual2025), token(tampered), 400, INVALID);
    await refused(employeesDelta(CYCLE.annual2025), token('not-a-token'), 400, INVALID);
    await refused(CYCLES_DELTA, token(globexCycles.token), 400, INVALID);
    await refused(employeesDelta(CYCLE.midYear), token(annual.token), 400, FOREIGN);
    await refused(CYCLES_DELTA, token(annual.token), 400, FOREIGN);
    await refused(employeesDelta(CYCLE.annual2025), token(cycles.token), 400, FOREIGN);
    await refused(CYCLES_DELTA, token(paged.pages[0]?.nextCursor as string), 400, FOREIGN);
    // A token is not a cursor either, of the delta or of the list.
    await refused(
      CYCLES_DELTA,
      `nextCursor=${encodeURIComponent(cycles.token)}`,
      400,
      'nextCursor belongs to a different list',
    );
    await refused(
      MERIT_CYCLES,
      `nextCursor=${encodeURIComponent(paged.pages[0]?.nextCursor as string)}`,
      400,
      'nextCursor belongs to a different list',
    );
    // Another organisation's key with this organisation's token.
    await refused(CYCLES_DELTA, token(cycles.token), 400, INVALID, globexKey);
  });

  it('nextCursor and deltaToken together is 400; an unknown parameter is 422', async () => {
    const cycles = await walkDelta(CYCLES_DELTA, { limit: 1 });
    await refused(
      CYCLES_DELTA,
      `nextCursor=${encodeURIComponent(cycles.pages[0]?.nextCursor as string)}&${token(cycles.token)}`,
      400,
      'Send nextCursor to go on with a delta walk, or deltaToken to start one, not both',
    );
    const response = await server.request(`${CYCLES_DELTA}?since=2025-01-01`, { key });
    expect(response.status).toBe(422);
    expect(
      ((await response.json()) as { validationErrors: unknown }).validationErrors,
    ).toStrictEqual([{ path: 'since', message: expect.any(String), code: 'unrecognized_keys' }]);
    const tooBig = await server.request(`${CYCLES_DELTA}?limit=101`, { key });
    expect(tooBig.status).toBe(422);
  });

  it('a token older than CHANGE_RETENTION_DAYS is 410, telling the client to sync in full', async () => {
    const cycles = await walkDelta(CYCLES_DELTA);
    clock.advance(DEFAULT_CHANGE_RETENTION_DAYS * DAY_MS - 60_000);
    await walkDelta(CYCLES_DELTA, { token: cycles.token });
    clock.advance(120_000);
    await refused(
      CYCLES_DELTA,
      token(cycles.token),
      410,
      'deltaToken has expired: the changes since it are no longer kept. Sync in full again (call without deltaToken) and keep the new deltaToken',
    );
  });

  it('a token from before a purged removal is 410, however young', async () => {
    const before = await walkDelta(employeesDelta(CYCLE.annual2025));
    await server.load(
      acmeWith((employees) => employees.filter((e) => e.id !== ADA_ID)),
      {
        prune: true,
      },
    );
    const between = await walkDelta(employeesDelta(CYCLE.annual2025), { token: before.token });
    expect(between.items).toStrictEqual([{ id: ADA_ID, removed: true }]);
    // An import 31 days later purges the removal: a token that would need it is 410.
    await server.load(
      acmeWith((employees) => employees.filter((e) => e.id !== ADA_ID)),
      {
        now: new Date(Date.now() + (DEFAULT_CHANGE_RETENTION_DAYS + 1) * DAY_MS),
      },
    );
    const stale = await server.request(
      `${employeesDelta(CYCLE.annual2025)}?${token(before.token)}`,
      { key },
    );
    expect(stale.status).toBe(410);
    // A token issued after the removal needs nothing purged.
    const fresh = await walkDelta(employeesDelta(CYCLE.annual2025), { token: between.token });
    expect(fresh.items).toStrictEqual([]);
  });

  it('answers with the rate-limit headers, and 304 for the ETag of a page that has not changed', async () => {
    const first = await server.request(`${CYCLES_DELTA}?limit=1`, { key });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).not.toBeNull();
    const etag = first.headers.get('etag') as string;
    expect(etag).toBeTruthy();
    const again = await server.request(`${CYCLES_DELTA}?limit=1`, {
      key,
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
  });
});

describe('what a key may see', () => {
  it("a key of another organisation gets 404 for this organisation's cycle", async () => {
    const globexKey = await server.createKey(GLOBEX, 'other org');
    const path = employeesDelta(CYCLE.annual2025);
    const response = await server.request(path, { key: globexKey });
    expect(response.status).toBe(404);
    const globex = await walkDelta(CYCLES_DELTA, { key: globexKey });
    expect(globex.items.map((i) => i.id)).toStrictEqual([CYCLE.globex]);
  });

  it('a key restricted to some cycles sees only theirs, removals included; hidden columns stay hidden', async () => {
    const scoped = await server.createKey(ACME, 'scoped', {
      cycles: [CYCLE.annual2025, CYCLE.midYear],
      hiddenColumns: ['department'],
    });
    const before = await walkDelta(CYCLES_DELTA, { key: scoped });
    expect(before.items.map((i) => i.id).sort()).toStrictEqual(
      [CYCLE.annual2025, CYCLE.midYear].sort(),
    );
    const employees = await walkDelta(employeesDelta(CYCLE.annual2025), { key: scoped });
    expect(employees.items.length).toBeGreaterThan(0);
    for (const employee of employees.items) {
      expect(Object.keys(employee.columns as object)).not.toContain('department');
    }
    expect((await server.request(employeesDelta(CYCLE.offset), { key: scoped })).status).toBe(404);
    // A scoped key's token is not a full key's, nor the other way round.
    const full = await walkDelta(CYCLES_DELTA);
    const response = await server.request(
      `${CYCLES_DELTA}?deltaToken=${encodeURIComponent(full.token)}`,
      { key: scoped },
    );
    expect(response.status).toBe(400);

    for (const cycle of [CYCLE.offset, CYCLE.midYear]) {
      await removeMeritCycle(server.database, cycle, {
        changeRetentionDays: DEFAULT_CHANGE_RETENTION_DAYS,
      });
    }
    const after = await walkDelta(CYCLES_DELTA, { key: scoped, token: before.token });
    expect(after.items).toStrictEqual([{ id: CYCLE.midYear, removed: true }]);
  });
});
