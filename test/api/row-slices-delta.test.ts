// A sliced key's employee delta and bulk ETag follow its slice across imports
// (docs/delta-sync.md, "Slices"; decisions §12): an employee who leaves the slice comes as
// removed, one who enters comes in full, an identical import brings nothing; the bulk
// download's ETag changes when what the key reads changes and not otherwise. A reporting
// line followed through the manager column, and a department condition. Real HTTP, the
// real import path, every database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { setManagerColumn } from '../../src/row-slices/manager-setting.js';
import { expectedEmployee } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORG = 'lineco';
const CYCLE = 'mc_72000000-0000-4000-8000-000000000001';
const PATH = `/v1/compensationPlanning/meritCycles/${CYCLE}/employees`;

type Employee = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];
type Json = Record<string, unknown>;

const ID = {
  m1: 'mce_72000000-0000-4000-8000-000000000001',
  a: 'mce_72000000-0000-4000-8000-000000000002',
  b: 'mce_72000000-0000-4000-8000-000000000003',
  c: 'mce_72000000-0000-4000-8000-000000000004',
  m2: 'mce_72000000-0000-4000-8000-000000000005',
  d: 'mce_72000000-0000-4000-8000-000000000006',
} as const;
type Who = keyof typeof ID;

interface Person {
  department: string;
  manager: Who | null;
  pay: number;
}

const employee = (who: Who, person: Person): Employee => ({
  id: ID[who],
  email: `${who}@lineco.example`,
  firstName: who.toUpperCase(),
  // Two share a last name: the list's order decides by first name, then id. And one in
  // lower case, which the list's order (code points) puts after every capital.
  lastName: who === 'a' || who === 'c' ? 'Same' : who === 'd' ? 'de Vries' : `Last-${who}`,
  currencyCode: 'USD',
  eligibilityStatus: 'eligible',
  columns: {
    department: { name: 'Department', type: 'text', value: person.department },
    manager: {
      name: 'Manager',
      type: 'text',
      value: person.manager === null ? null : `${person.manager}@lineco.example`,
    },
    basePay: { name: 'Base pay', type: 'currency', value: { USD: `${person.pay}.00` } },
  },
});

/** m1 ← a ← b and m2 ← c; d alone in Finance. */
const FIRST: Record<Who, Person> = {
  m1: { department: 'Engineering', manager: null, pay: 200000 },
  a: { department: 'Engineering', manager: 'm1', pay: 150000 },
  b: { department: 'Engineering', manager: 'a', pay: 120000 },
  c: { department: 'Sales', manager: 'm2', pay: 110000 },
  m2: { department: 'Sales', manager: null, pay: 210000 },
  d: { department: 'Finance', manager: null, pay: 100000 },
};
/** b moves to m2's line and to Sales; c moves under a; d moves to Engineering. */
const SECOND: Record<Who, Person> = {
  ...FIRST,
  b: { department: 'Sales', manager: 'm2', pay: 120000 },
  c: { department: 'Sales', manager: 'a', pay: 110000 },
  d: { department: 'Engineering', manager: null, pay: 100000 },
};
/** Only m2, in neither slice, changes. */
const THIRD: Record<Who, Person> = { ...SECOND, m2: { ...SECOND.m2, pay: 220000 } };
/** a, in both slices, changes. */
const FOURTH: Record<Who, Person> = { ...THIRD, a: { ...THIRD.a, pay: 155000 } };

const dataSet = (people: Record<Who, Person>): DataSetInput => ({
  organization: { slug: ORG, name: 'Line Co', apiKeysEnabled: true },
  meritCycles: [
    {
      id: CYCLE,
      name: 'Line 2025',
      status: 'active',
      startDate: '2025-01-01T00:00:00.000Z',
      endDate: '2025-03-31T23:59:59.999Z',
      createdDate: '2024-11-15T09:30:00.000Z',
      currency: 'USD',
      exchangeRates: {},
      employees: (Object.keys(ID) as Who[]).map((who) => employee(who, people[who])),
    },
  ],
});

/** What the delta carries of an employee present now: the employee in full. */
const full = (who: Who, people: Record<Who, Person>) =>
  expectedEmployee(employee(who, people[who])) as Json;
const byId = (items: Json[]) => [...items].sort((x, y) => (String(x.id) < String(y.id) ? -1 : 1));

describe('a sliced key across imports: the delta and the bulk ETag', () => {
  let server: TestServer;
  const key = { line: '', department: '', all: '' };

  /** The whole delta walk from `token` (none: the first walk), a page of one at a time. */
  async function walk(secret: string, token?: string): Promise<{ items: Json[]; token: string }> {
    const items: Json[] = [];
    let query = token ? `deltaToken=${encodeURIComponent(token)}` : '';
    for (;;) {
      const response = await server.request(`${PATH}/delta?limit=1&${query}`, { key: secret });
      expect(response.status).toBe(200);
      const page = (await response.json()) as Json;
      items.push(...(page.data as Json[]));
      if (typeof page.nextCursor === 'string') {
        query = `nextCursor=${encodeURIComponent(page.nextCursor)}`;
        continue;
      }
      return { items, token: String(page.deltaToken) };
    }
  }
  async function etag(secret: string): Promise<string> {
    const response = await server.request(`${PATH}/bulk`, { key: secret });
    expect(response.status).toBe(200);
    await response.text();
    return response.headers.get('etag') ?? '';
  }
  /** The ids of the key's REST page, checked to be in the unsliced list's order. */
  async function page(secret: string): Promise<string[]> {
    const ids = async (k: string) => {
      const response = await server.request(`${PATH}?limit=100`, { key: k });
      const body = (await response.json()) as { data: Json[] };
      return body.data.map((e) => String(e.id));
    };
    const [sliced, all] = [await ids(secret), await ids(key.all)];
    expect(sliced).toEqual(all.filter((id) => sliced.includes(id)));
    return sliced;
  }

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [dataSet(FIRST)] });
    await setManagerColumn(server.database, ORG, 'manager');
    key.line = await server.createKey(ORG, 'line', { reportsTo: 'm1@lineco.example' });
    key.department = await server.createKey(ORG, 'dept', { rows: 'department = Engineering' });
    key.all = await server.createKey(ORG, 'all');
  });
  afterAll(() => server?.close());

  it('follows a manager change and a department change through two imports, and nothing after an identical one', async () => {
    // m1's line: a, and b under a; Engineering: m1, a, b. In the list's order.
    expect(await page(key.line)).toEqual([ID.b, ID.a]);
    expect(await page(key.department)).toEqual([ID.b, ID.m1, ID.a]);
    const line1 = await walk(key.line);
    const dept1 = await walk(key.department);
    expect(byId(line1.items)).toEqual(byId([full('a', FIRST), full('b', FIRST)]));
    expect(byId(dept1.items)).toEqual(
      byId([full('m1', FIRST), full('a', FIRST), full('b', FIRST)]),
    );
    const tags1 = {
      line: await etag(key.line),
      dept: await etag(key.department),
      all: await etag(key.all),
    };

    const summary = await server.load(dataSet(SECOND));
    expect(summary.employees).toMatchObject({ created: 0, updated: 3, removed: 0 });
    // b left m1's line (now under m2), c entered it (under a): two levels down.
    expect(await page(key.line)).toEqual([ID.a, ID.c]);
    expect(await page(key.department)).toEqual([ID.m1, ID.a, ID.d]);
    const line2 = await walk(key.line, line1.token);
    expect(byId(line2.items)).toEqual(byId([{ id: ID.b, removed: true }, full('c', SECOND)]));
    const dept2 = await walk(key.department, dept1.token);
    expect(byId(dept2.items)).toEqual(byId([{ id: ID.b, removed: true }, full('d', SECOND)]));
    const tags2 = {
      line: await etag(key.line),
      dept: await etag(key.department),
      all: await etag(key.all),
    };
    expect(tags2.line).not.toBe(tags1.line);
    expect(tags2.dept).not.toBe(tags1.dept);
    expect(tags2.all).not.toBe(tags1.all);

    // The same data again: nothing changed, for anyone.
    await server.load(dataSet(SECOND));
    const line3 = await walk(key.line, line2.token);
    const dept3 = await walk(key.department, dept2.token);
    expect(line3.items).toEqual([]);
    expect(dept3.items).toEqual([]);
    expect({
      line: await etag(key.line),
      dept: await etag(key.department),
      all: await etag(key.all),
    }).toEqual(tags2);

    // m2 changes, in neither slice: the slices' deltas and ETags stay as they were.
    await server.load(dataSet(THIRD));
    expect((await walk(key.line, line3.token)).items).toEqual([]);
    expect((await walk(key.department, dept3.token)).items).toEqual([]);
    expect(await etag(key.line)).toBe(tags2.line);
    expect(await etag(key.department)).toBe(tags2.dept);
    expect(await etag(key.all)).not.toBe(tags2.all);

    // a changes, in both slices: each delta brings a in full, each ETag changes.
    const before = { line: await etag(key.line), dept: await etag(key.department) };
    const line4 = await walk(key.line, (await walk(key.line, line3.token)).token);
    const dept4 = await walk(key.department, (await walk(key.department, dept3.token)).token);
    expect([line4.items, dept4.items]).toEqual([[], []]);
    await server.load(dataSet(FOURTH));
    expect((await walk(key.line, line4.token)).items).toEqual([full('a', FOURTH)]);
    expect((await walk(key.department, dept4.token)).items).toEqual([full('a', FOURTH)]);
    expect(await etag(key.line)).not.toBe(before.line);
    expect(await etag(key.department)).not.toBe(before.dept);

    // c, in m1's line only, is removed from the data: removed for the line, nothing for the
    // department; the line's ETag changes and the department's does not.
    const line5 = await walk(key.line, line4.token);
    const dept5 = await walk(key.department, dept4.token);
    const tags5 = { line: await etag(key.line), dept: await etag(key.department) };
    const pruned = dataSet(FOURTH);
    const [cycle] = pruned.meritCycles;
    if (cycle) cycle.employees = cycle.employees?.filter((e) => e.id !== ID.c);
    await server.load(pruned, { prune: true });
    expect((await walk(key.line, line5.token)).items).toEqual([{ id: ID.c, removed: true }]);
    expect((await walk(key.department, dept5.token)).items).toEqual([]);
    expect(await etag(key.line)).not.toBe(tags5.line);
    expect(await etag(key.department)).toBe(tags5.dept);
    expect(await page(key.line)).toEqual([ID.a]);
  });

  it('the feed pages a slice by nextLink, a row a page, in its order and in another, with its count', async () => {
    for (const secret of [key.line, key.department, key.all]) {
      const response = await server.request(`${PATH}?limit=100`, { key: secret });
      const rest = ((await response.json()) as { data: Json[] }).data;
      const feed = async (query: string) => {
        const ids: string[] = [];
        let counted: unknown;
        let next: string | undefined = `/odata/v4/Employees?${query}`;
        while (next !== undefined) {
          const url = new URL(next, server.url);
          const answer = await server.request(`${url.pathname}${url.search}`, {
            key: secret,
            headers: { prefer: 'odata.maxpagesize=1' },
          });
          expect(answer.status, next).toBe(200);
          const body = (await answer.json()) as Json;
          counted ??= body['@odata.count'];
          // A row a page: the slice is walked by its skip tokens, not read at once.
          expect((body.value as Json[]).length).toBeLessThanOrEqual(1);
          ids.push(...(body.value as Json[]).map((entity) => String(entity.id)));
          next = body['@odata.nextLink'] as string | undefined;
        }
        return { ids, counted };
      };
      expect(await feed('$count=true')).toEqual({
        ids: rest.map((e) => e.id),
        counted: rest.length,
      });
      const byLastNameDesc = [...rest].sort((x, y) =>
        x.lastName === y.lastName
          ? String(x.id) < String(y.id)
            ? -1
            : 1
          : String(x.lastName) < String(y.lastName)
            ? 1
            : -1,
      );
      expect(await feed('$orderby=lastName%20desc,id&$count=true')).toEqual({
        ids: byLastNameDesc.map((e) => e.id),
        counted: rest.length,
      });
      const count = await server.request('/odata/v4/Employees/$count', { key: secret });
      expect(await count.text()).toBe(String(rest.length));
    }
  });
});
