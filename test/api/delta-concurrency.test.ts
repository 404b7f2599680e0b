// No lost change across instances (docs/delta-sync.md, "Order and guarantee"): imports
// commit through another database handle — another instance, on PostgreSQL another
// connection pool — while a client walks deltas and applies every page to its copy. After
// each import and one last walk, the copy is exactly the list, every time. A token that
// passed over a change not yet committed when the walk read past it would leave the copy
// behind for good (no later delta would bring that change).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { importDataSet } from '../../src/import/load.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { ACME, LARGE_CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const EMPLOYEES = 300;
const ROUNDS = 12;
const DELTA = `${employeesPath(LARGE_CYCLE)}/delta`;

interface Item {
  id: string;
  removed?: true;
}

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ dataSets: [largeCycleDataSet(EMPLOYEES)] });
  key = await server.createKey(ACME, 'sync');
});
afterAll(() => server.close());

/** Round `round`'s data set: some employees renamed, some left out (pruned), the rest as they were. */
function roundDataSet(round: number): DataSetInput {
  const dataSet = largeCycleDataSet(EMPLOYEES);
  const cycle = dataSet.meritCycles[0] as DataSetInput['meritCycles'][number];
  cycle.employees = (cycle.employees ?? [])
    .filter((_, j) => j % 11 !== round % 11)
    .map((e, j) => ((j + round) % 7 === 0 ? { ...e, firstName: `${e.firstName} ${round}` } : e));
  return dataSet;
}

/** One delta walk from `token` (none: a full walk), applied page by page to `copy`. */
async function syncOnce(copy: Map<string, Item>, token: string | undefined): Promise<string> {
  let query = token ? `deltaToken=${encodeURIComponent(token)}` : '';
  for (;;) {
    const response = await server.request(`${DELTA}?limit=7&${query}`, { key });
    expect(response.status).toBe(200);
    const page = (await response.json()) as {
      data: Item[];
      nextCursor: string | null;
      deltaToken: string | null;
    };
    for (const item of page.data) {
      if (item.removed) copy.delete(item.id);
      else copy.set(item.id, item);
    }
    if (page.nextCursor === null) return page.deltaToken as string;
    query = `nextCursor=${encodeURIComponent(page.nextCursor)}`;
  }
}

describe('delta walks while imports commit from another instance', () => {
  it(`the copy equals the list after every one of ${ROUNDS} concurrent imports`, async () => {
    const other = openDatabase(server.databaseConfig);
    try {
      const copy = new Map<string, Item>();
      let token = await syncOnce(copy, undefined);
      let walksDuringImports = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        let done = false;
        const importing = importDataSet(other, roundDataSet(round), { prune: true }).finally(() => {
          done = true;
        });
        // Walk again and again while the import runs, each from the last walk's token.
        while (!done) {
          token = await syncOnce(copy, token);
          walksDuringImports++;
        }
        await importing;
        token = await syncOnce(copy, token);
        // What the list serves: the stored bodies (read from the database, not through the
        // API, whose response cache may not have heard of the other instance's import yet).
        const stored = await server.database.db
          .selectFrom('merit_cycle_employees')
          .select('body')
          .where('merit_cycle_id', '=', LARGE_CYCLE)
          .execute();
        const list = stored.map((row) => JSON.parse(row.body) as Item);
        expect(list.length).toBeGreaterThan(EMPLOYEES * 0.85);
        const sorted = (items: Iterable<Item>) => [...items].sort((a, b) => (a.id < b.id ? -1 : 1));
        expect(sorted(copy.values())).toStrictEqual(sorted(list));
      }
      // The walks did overlap the imports (each import runs for many walks' time).
      expect(walksDuringImports).toBeGreaterThanOrEqual(ROUNDS);
    } finally {
      await other.close();
    }
  });
});
