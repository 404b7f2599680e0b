// Re-importing the same data set changes and duplicates nothing (docs/import-format.md).
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { ACME, acmeDataSet, GLOBEX, globexDataSet } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { apiSnapshot, countRows, dumpTables } from '../helpers/snapshot.js';

/** The data set without any id: cycles then match by name, employees by email. */
function withoutIds(dataSet: DataSetInput): DataSetInput {
  return {
    ...dataSet,
    meritCycles: dataSet.meritCycles.map(({ id: _id, ...cycle }) => ({
      ...cycle,
      ...(cycle.employees
        ? { employees: cycle.employees.map(({ id: _employeeId, ...employee }) => employee) }
        : {}),
    })),
  };
}

describe('import idempotency', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a second import of the same data set reports everything unchanged and leaves every table and API answer identical', async () => {
    server = await startTestServer();
    expect(await server.load(acmeDataSet())).toEqual({
      organization: { slug: ACME, created: true, changed: [] },
      meritCycles: { created: 6, updated: 0, unchanged: 0 },
      employees: { created: 11, updated: 0, unchanged: 0, removed: 0 },
    });
    const key = await server.createKey(ACME);
    const tablesBefore = await dumpTables(server.database.db);
    const apiBefore = await apiSnapshot(server, key);

    expect(await server.load(acmeDataSet())).toEqual({
      organization: { slug: ACME, created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 6 },
      employees: { created: 0, updated: 0, unchanged: 11, removed: 0 },
    });
    expect(await dumpTables(server.database.db)).toEqual(tablesBefore);
    expect(await apiSnapshot(server, key)).toEqual(apiBefore);
    expect(apiBefore.meritCycles).toHaveLength(6);
  });

  it('a data set without ids imports twice without duplicates, keeping the ids generated the first time', async () => {
    server = await startTestServer();
    const dataSet = withoutIds(acmeDataSet());
    await server.load(dataSet);
    const key = await server.createKey(ACME);
    const counts = await countRows(server.database.db);
    const apiBefore = await apiSnapshot(server, key);

    expect(await server.load(dataSet)).toEqual({
      organization: { slug: ACME, created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 6 },
      employees: { created: 0, updated: 0, unchanged: 11, removed: 0 },
    });
    expect(await countRows(server.database.db)).toEqual(counts);
    expect(counts.merit_cycles).toBe(6);
    expect(counts.merit_cycle_employees).toBe(11);
    expect(await apiSnapshot(server, key)).toEqual(apiBefore);
  });

  it('importing another organisation, then the first again, changes nothing of the first', async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
    const key = await server.createKey(ACME);
    const apiBefore = await apiSnapshot(server, key);
    expect((await server.load(globexDataSet())).organization).toEqual({
      slug: GLOBEX,
      created: true,
      changed: [],
    });
    const summary = await server.load(acmeDataSet());
    expect(summary.meritCycles).toEqual({ created: 0, updated: 0, unchanged: 6 });
    expect(await apiSnapshot(server, key)).toEqual(apiBefore);
  });
});
