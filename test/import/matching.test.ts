// Matching on re-import, optional fields and --prune (docs/import-format.md).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyManagementError } from '../../src/api-keys/service.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { listOrganizations, setApiKeysEnabled } from '../../src/tenancy/organizations.js';
import { ACME, ADA_ID, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { listAll } from '../helpers/snapshot.js';

const CYCLES = '/v1/compensationPlanning/meritCycles';
const MC_ID = /^mc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MCE_ID = /^mce_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Cycle = DataSetInput['meritCycles'][number];
type Employee = NonNullable<Cycle['employees']>[number];

interface ServedCycle {
  id: string;
  name: string;
  startDate: string;
  endDate: string;
  createdDate: string;
  status: string;
}
interface ServedEmployee {
  id: string;
  email: string;
  firstName: string;
  preferredName: string | null;
}

function person(n: number, extra: Partial<Employee> = {}): Employee {
  return {
    email: `person${n}@initech.example`,
    firstName: `First${n}`,
    lastName: `Last${n}`,
    currencyCode: 'USD',
    eligibilityStatus: 'eligible',
    columns: {},
    ...extra,
  };
}

/** An organisation with no ids anywhere and no optional fields. */
function minimalDataSet(employees: Employee[] = [person(1), person(2)]): DataSetInput {
  return {
    organization: { slug: 'initech', name: 'Initech' },
    meritCycles: [
      {
        name: 'Spring',
        status: 'active',
        startDate: '2026-03-01T00:00:00.000Z',
        endDate: '2026-04-01T00:00:00.000Z',
        currency: 'USD',
        employees,
      },
    ],
  };
}

describe('import matching, optional fields and --prune', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(dataSets: DataSetInput[] = []) {
    server = await startTestServer({ dataSets });
    return server;
  }
  async function enableKeys(s: TestServer, slug: string) {
    const org = (await listOrganizations(s.database.db)).find((o) => o.slug === slug);
    if (!org) throw new Error(`no organisation ${slug}`);
    await setApiKeysEnabled(s.database.db, org.id, true);
  }
  async function cycles(s: TestServer, key: string) {
    return (await listAll(s, key, CYCLES)) as ServedCycle[];
  }
  async function employees(s: TestServer, key: string, cycleId: string) {
    return (await listAll(s, key, `${CYCLES}/${cycleId}/employees`)) as ServedEmployee[];
  }

  it('matches by id: a renamed cycle and an employee with a new email keep their ids and are updated, not duplicated', async () => {
    const s = await start([acmeDataSet()]);
    const key = await s.createKey(ACME);
    const dataSet = acmeDataSet();
    const [first] = dataSet.meritCycles;
    if (!first?.employees?.[0]) throw new Error('fixture changed');
    first.name = '2025 Annual Merit (renamed)';
    first.employees[0].email = 'ada.lovelace@acme.example';

    expect(await s.load(dataSet)).toEqual({
      organization: { slug: ACME, created: false, changed: [] },
      meritCycles: { created: 0, updated: 1, unchanged: 5 },
      employees: { created: 0, updated: 1, unchanged: 10, removed: 0 },
    });
    const served = await cycles(s, key);
    expect(served).toHaveLength(6);
    expect(served.find((c) => c.id === CYCLE.annual2025)?.name).toBe('2025 Annual Merit (renamed)');
    const people = await employees(s, key, CYCLE.annual2025);
    expect(people).toHaveLength(3);
    expect(people.find((e) => e.id === ADA_ID)?.email).toBe('ada.lovelace@acme.example');
  });

  it('without ids, matches a cycle by organisation and name and an employee by cycle and email, case-insensitively; ids are kept', async () => {
    const s = await start([minimalDataSet()]);
    await enableKeys(s, 'initech');
    const key = await s.createKey('initech');
    const [cycle] = await cycles(s, key);
    if (!cycle) throw new Error('no cycle');
    const before = await employees(s, key, cycle.id);

    const changed = minimalDataSet([
      person(1, { email: 'PERSON1@Initech.Example', firstName: 'Renamed' }),
      person(2),
    ]);
    expect(await s.load(changed)).toEqual({
      organization: { slug: 'initech', created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 1 },
      employees: { created: 0, updated: 1, unchanged: 1, removed: 0 },
    });
    const after = await employees(s, key, cycle.id);
    expect(after.map((e) => e.id).sort()).toEqual(before.map((e) => e.id).sort());
    const first = after.find((e) => e.id === before.find((b) => b.firstName === 'First1')?.id);
    expect(first).toMatchObject({ email: 'PERSON1@Initech.Example', firstName: 'Renamed' });
    expect((await cycles(s, key)).map((c) => c.id)).toEqual([cycle.id]);
  });

  it('the same cycle name in another organisation and the same email in another cycle are different records', async () => {
    const s = await start([minimalDataSet()]);
    const other = minimalDataSet();
    other.organization = { slug: 'initech-eu', name: 'Initech Europe' };
    const summary = await s.load(other);
    expect(summary.meritCycles).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(summary.employees).toEqual({ created: 2, updated: 0, unchanged: 0, removed: 0 });

    const second = minimalDataSet();
    const cycle = second.meritCycles[0];
    if (!cycle) throw new Error('no cycle');
    second.meritCycles.push({ ...cycle, name: 'Autumn' });
    const again = await s.load(second);
    expect(again.meritCycles).toEqual({ created: 1, updated: 0, unchanged: 1 });
    expect(again.employees).toEqual({ created: 2, updated: 0, unchanged: 2, removed: 0 });
  });

  it('generates mc_/mce_ ids with a lowercase UUID; createdDate is the import time and a re-import keeps it', async () => {
    const s = await start();
    const startedAt = Date.now();
    await s.load(minimalDataSet());
    const finishedAt = Date.now();
    await enableKeys(s, 'initech');
    const key = await s.createKey('initech');
    const [cycle] = await cycles(s, key);
    if (!cycle) throw new Error('no cycle');
    expect(cycle.id).toMatch(MC_ID);
    const created = Date.parse(cycle.createdDate);
    expect(cycle.createdDate).toBe(new Date(created).toISOString());
    expect(created).toBeGreaterThanOrEqual(startedAt);
    expect(created).toBeLessThanOrEqual(finishedAt);
    const people = await employees(s, key, cycle.id);
    expect(people).toHaveLength(2);
    for (const employee of people) expect(employee.id).toMatch(MCE_ID);

    await sleep(5);
    expect((await s.load(minimalDataSet())).meritCycles).toEqual({
      created: 0,
      updated: 0,
      unchanged: 1,
    });
    expect(await cycles(s, key)).toEqual([cycle]);
  });

  it('preferredName is null when absent, also for an employee that had one', async () => {
    const s = await start([minimalDataSet([person(1, { preferredName: 'Uno' }), person(2)])]);
    await enableKeys(s, 'initech');
    const key = await s.createKey('initech');
    const [cycle] = await cycles(s, key);
    if (!cycle) throw new Error('no cycle');
    const before = await employees(s, key, cycle.id);
    expect(before.map((e) => [e.firstName, e.preferredName])).toEqual([
      ['First1', 'Uno'],
      ['First2', null],
    ]);
    const summary = await s.load(minimalDataSet());
    expect(summary.employees).toEqual({ created: 0, updated: 1, unchanged: 1, removed: 0 });
    const after = await employees(s, key, cycle.id);
    expect(after.map((e) => [e.firstName, e.preferredName])).toEqual([
      ['First1', null],
      ['First2', null],
    ]);
  });

  it('apiKeysEnabled is false for a new organisation when absent, and an existing organisation keeps its setting when absent', async () => {
    const s = await start([minimalDataSet()]);
    const setting = async () =>
      (await listOrganizations(s.database.db)).find((o) => o.slug === 'initech')?.apiKeysEnabled;
    expect(await setting()).toBe(false);
    await expect(s.createKey('initech')).rejects.toBeInstanceOf(KeyManagementError);

    await enableKeys(s, 'initech');
    expect((await s.load(minimalDataSet())).organization.changed).toEqual([]);
    expect(await setting()).toBe(true);

    const disabling = minimalDataSet();
    disabling.organization.apiKeysEnabled = false;
    expect((await s.load(disabling)).organization.changed).toEqual(['apiKeysEnabled']);
    expect(await setting()).toBe(false);
  });

  it('the summary names the organisation fields an import changed, and only those', async () => {
    const s = await start([minimalDataSet()]);
    const renamed = minimalDataSet();
    renamed.organization.name = 'Initech Corporation';
    expect((await s.load(renamed)).organization).toEqual({
      slug: 'initech',
      created: false,
      changed: ['name'],
    });
    renamed.organization.name = 'Initech';
    renamed.organization.apiKeysEnabled = true;
    expect((await s.load(renamed)).organization.changed).toEqual(['name', 'apiKeysEnabled']);
    expect((await s.load(renamed)).organization.changed).toEqual([]);
    const served = (await listOrganizations(s.database.db)).find((o) => o.slug === 'initech');
    expect(served).toMatchObject({ name: 'Initech', apiKeysEnabled: true });
  });

  it('a cycle without exchangeRates serves empty rates; a re-import without them keeps the stored rates', async () => {
    const s = await start([acmeDataSet()]);
    const key = await s.createKey(ACME);
    const rates = async (id: string) =>
      (await s.request(`${CYCLES}/${id}/exchangeRates`, { key })).json();
    expect(await rates(CYCLE.offset)).toEqual({ base: 'USD', rates: {} });

    const dataSet = acmeDataSet();
    const [first] = dataSet.meritCycles;
    if (!first) throw new Error('fixture changed');
    delete first.exchangeRates;
    expect((await s.load(dataSet)).meritCycles).toEqual({ created: 0, updated: 0, unchanged: 6 });
    expect(await rates(CYCLE.annual2025)).toEqual({
      base: 'USD',
      rates: { EUR: 0.92, GBP: 0.79, JPY: 151.3 },
    });
  });

  it('without --prune, employees the file no longer lists stay; with --prune they go, only from the cycles the file lists', async () => {
    const s = await start([acmeDataSet()]);
    const key = await s.createKey(ACME);
    const dataSet = acmeDataSet();
    const [first] = dataSet.meritCycles;
    if (!first?.employees) throw new Error('fixture changed');
    // Only the 2025 Annual Merit cycle, with only Ada.
    dataSet.meritCycles = [{ ...first, employees: first.employees.slice(0, 1) }];

    expect(await s.load(dataSet)).toEqual({
      organization: { slug: ACME, created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 1 },
      employees: { created: 0, updated: 0, unchanged: 1, removed: 0 },
    });
    expect(await employees(s, key, CYCLE.annual2025)).toHaveLength(3);

    expect(await s.load(dataSet, { prune: true })).toEqual({
      organization: { slug: ACME, created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 1 },
      employees: { created: 0, updated: 0, unchanged: 1, removed: 2 },
    });
    expect((await employees(s, key, CYCLE.annual2025)).map((e) => e.id)).toEqual([ADA_ID]);
    // Cycles the file does not list keep everything, and are not removed.
    expect(await cycles(s, key)).toHaveLength(6);
    expect(await employees(s, key, CYCLE.midYear)).toHaveLength(8);
  });

  it('with --prune, a cycle listed with an empty employees array loses them all; one listed without employees keeps them', async () => {
    const s = await start([acmeDataSet()]);
    const key = await s.createKey(ACME);
    const dataSet = acmeDataSet();
    const [first, second] = dataSet.meritCycles;
    if (!first || !second) throw new Error('fixture changed');
    first.employees = [];
    delete second.employees;
    const summary = await s.load(dataSet, { prune: true });
    expect(summary.employees).toEqual({ created: 0, updated: 0, unchanged: 0, removed: 3 });
    expect(await employees(s, key, CYCLE.annual2025)).toEqual([]);
    expect(await employees(s, key, CYCLE.midYear)).toHaveLength(8);
  });

  it('with --prune, a new employee may take the email of an employee the file no longer lists', async () => {
    const s = await start([acmeDataSet()]);
    const key = await s.createKey(ACME);
    const dataSet = acmeDataSet();
    const [first] = dataSet.meritCycles;
    if (!first?.employees?.[0]) throw new Error('fixture changed');
    const replacement = 'mce_40000000-0000-4000-8000-00000000000b';
    first.employees[0] = { ...first.employees[0], id: replacement, firstName: 'Augusta' };
    const summary = await s.load(dataSet, { prune: true });
    expect(summary.employees).toEqual({ created: 1, updated: 0, unchanged: 10, removed: 1 });
    const people = await employees(s, key, CYCLE.annual2025);
    expect(people.map((e) => e.id)).not.toContain(ADA_ID);
    expect(people.find((e) => e.id === replacement)).toMatchObject({
      email: 'ada@acme.example',
      firstName: 'Augusta',
    });
  });

  it('an employee without an id is not matched to a stored one the file names by id: a renamed employee gives up its old email to a new one', async () => {
    const s = await start([acmeDataSet()]);
    const key = await s.createKey(ACME);
    const dataSet = acmeDataSet();
    const [first] = dataSet.meritCycles;
    const ada = first?.employees?.[0];
    if (!first?.employees || ada?.id !== ADA_ID) throw new Error('fixture changed');
    // Ada, by her id, changes her email; a new employee without an id takes the old one.
    first.employees[0] = { ...ada, email: 'ada.lovelace@acme.example' };
    const { id: _none, ...newcomer } = ada;
    first.employees.push({ ...newcomer, firstName: 'Augusta' });

    expect((await s.load(dataSet)).employees).toEqual({
      created: 1,
      updated: 1,
      unchanged: 10,
      removed: 0,
    });
    const people = await employees(s, key, CYCLE.annual2025);
    expect(people).toHaveLength(4);
    expect(people.find((e) => e.id === ADA_ID)?.email).toBe('ada.lovelace@acme.example');
    const added = people.find((e) => e.email === 'ada@acme.example');
    expect(added).toMatchObject({ firstName: 'Augusta', id: expect.stringMatching(MCE_ID) });
    expect(added?.id).not.toBe(ADA_ID);
    // The same file again: the new employee is matched by its email, Ada by her id.
    expect((await s.load(dataSet)).employees).toEqual({
      created: 0,
      updated: 0,
      unchanged: 12,
      removed: 0,
    });
  });
});
