// All or nothing (docs/import-format.md): an import that fails while loading — after
// earlier cycles were already written in its transaction — leaves no trace at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../src/import/errors.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { ACME, ADA_ID, acmeDataSet, CYCLE, globexDataSet } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dumpTables } from '../helpers/snapshot.js';

type Cycle = DataSetInput['meritCycles'][number];

/** A valid cycle that exists nowhere yet, with two employees. */
function freshCycle(name: string): Cycle {
  return {
    id: 'mc_40000000-0000-4000-8000-000000000001',
    name,
    status: 'active',
    startDate: '2026-01-01T00:00:00.000Z',
    endDate: '2026-02-01T00:00:00.000Z',
    currency: 'USD',
    exchangeRates: { EUR: 0.9 },
    employees: [
      {
        id: 'mce_40000000-0000-4000-8000-000000000001',
        email: 'new1@acme.example',
        firstName: 'New',
        lastName: 'One',
        currencyCode: 'USD',
        eligibilityStatus: 'eligible',
        columns: {},
      },
      {
        email: 'new2@acme.example',
        firstName: 'New',
        lastName: 'Two',
        currencyCode: 'EUR',
        eligibilityStatus: 'eligible',
        columns: {},
      },
    ],
  };
}

async function failure(promise: Promise<unknown>): Promise<readonly string[]> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ImportError) return error.lines;
    throw error;
  }
  throw new Error('the import succeeded');
}

describe('import atomicity', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), globexDataSet()] });
  });
  afterAll(() => server.close());

  it('a new organisation whose second cycle has the id of another organisation’s cycle: error at that path, nothing written', async () => {
    const before = await dumpTables(server.database.db);
    const stolen = { ...freshCycle('Second'), id: CYCLE.globex, employees: [] };
    const problems = await failure(
      server.load({
        organization: { slug: 'initech', name: 'Initech', apiKeysEnabled: true },
        meritCycles: [freshCycle('First'), stolen],
      }),
    );
    expect(problems).toEqual([
      `meritCycles[1].id: ${CYCLE.globex} is already used by another organisation`,
    ]);
    // Not the organisation, not the first cycle, not its employees.
    expect(await dumpTables(server.database.db)).toEqual(before);
  });

  it('an existing organisation: changes to its first cycle are undone when the second cycle fails', async () => {
    const before = await dumpTables(server.database.db);
    const dataSet = acmeDataSet();
    dataSet.organization.name = 'Acme Renamed';
    const [first, second] = dataSet.meritCycles;
    if (!first?.employees || !second) throw new Error('fixture changed');
    first.name = '2025 Annual Merit (renamed)';
    first.employees.pop();
    first.employees.push({
      email: 'added@acme.example',
      firstName: 'Added',
      lastName: 'Person',
      currencyCode: 'USD',
      eligibilityStatus: 'eligible',
      columns: {},
    });
    second.id = CYCLE.globex;
    const problems = await failure(server.load(dataSet, { prune: true }));
    expect(problems).toEqual([
      `meritCycles[1].id: ${CYCLE.globex} is already used by another organisation`,
    ]);
    expect(await dumpTables(server.database.db)).toEqual(before);
  });

  it('an employee id that belongs to another cycle fails the import at its path and writes nothing', async () => {
    const before = await dumpTables(server.database.db);
    const elsewhere = freshCycle('Borrowed');
    elsewhere.id = 'mc_40000000-0000-4000-8000-000000000002';
    elsewhere.employees = [
      {
        id: ADA_ID, // Ada belongs to the 2025 Annual Merit cycle.
        email: 'ada@acme.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
        currencyCode: 'GBP',
        eligibilityStatus: 'eligible',
        columns: {},
      },
    ];
    const problems = await failure(
      server.load({
        organization: { slug: ACME, name: 'Acme Corp' },
        meritCycles: [freshCycle('First new cycle'), elsewhere],
      }),
    );
    expect(problems).toEqual([
      `meritCycles[1].employees[0].id: ${ADA_ID} already belongs to another merit cycle`,
    ]);
    expect(await dumpTables(server.database.db)).toEqual(before);
  });

  it('a cycle whose name another stored cycle of the organisation has fails at its path and writes nothing', async () => {
    const before = await dumpTables(server.database.db);
    const namesake = freshCycle('2025 Annual Merit');
    namesake.id = 'mc_40000000-0000-4000-8000-000000000003';
    namesake.employees = [];
    const problems = await failure(
      server.load({
        organization: { slug: ACME, name: 'Acme Corp' },
        meritCycles: [freshCycle('First new cycle'), namesake],
      }),
    );
    expect(problems).toEqual([
      `meritCycles[1].name: merit cycle ${CYCLE.annual2025} of this organisation already has the name "2025 Annual Merit"`,
    ]);
    expect(await dumpTables(server.database.db)).toEqual(before);
  });

  it('without --prune, a new employee taking the email of an employee the file no longer lists fails and writes nothing', async () => {
    const before = await dumpTables(server.database.db);
    const dataSet = acmeDataSet();
    const [first] = dataSet.meritCycles;
    if (!first?.employees?.[0]) throw new Error('fixture changed');
    // Written first in the transaction, then undone.
    first.name = 'Renamed first';
    // Ada is no longer listed under her id; a new employee takes her email.
    const { id: _id, ...ada } = first.employees[0];
    first.employees[0] = { ...ada, id: 'mce_40000000-0000-4000-8000-00000000000a' };
    const problems = await failure(server.load(dataSet));
    expect(problems).toEqual([
      `meritCycles[0].employees[0].email: employee ${ADA_ID} of this merit cycle already has this email (import with --prune to replace employees the file no longer lists)`,
    ]);
    expect(await dumpTables(server.database.db)).toEqual(before);
  });
});
