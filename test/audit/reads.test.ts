// What the audit log records of every read path (docs/security.md, "Audit log"): the
// employees actually sent — a REST page, a delta page, an OData page (also through a
// cycle), a whole bulk download as NDJSON and CSV, one left part-way — the merit cycle of
// OData paths, and the column keys the answer carried, after hidden columns and $select;
// and the log's filter by a column served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditEntries } from '../../src/audit/repository.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import {
  WIDE_CYCLE,
  WIDE_EMPLOYEES,
  WIDE_ORG,
  wideCycleDataSet,
} from '../fixtures/bulk-data-sets.js';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { pausedDownload } from '../helpers/paused-download.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { auditEntriesOf, requestsOf } from './helpers.js';

const ACME_CYCLES = acmeDataSet().meritCycles;
const ANNUAL = ACME_CYCLES.filter((cycle) => cycle.id === CYCLE.annual2025);
const ACME_EMPLOYEES = ANNUAL[0]?.employees?.length ?? 0;
/** The column keys of these cycles' schemas: every key any of their employees has. */
const columnsOf = (cycles: typeof ACME_CYCLES) =>
  [
    ...new Set(
      cycles.flatMap((cycle) =>
        (cycle.employees ?? []).flatMap((e) => Object.keys(e.columns as object)),
      ),
    ),
  ].sort();
const ANNUAL_COLUMNS = columnsOf(ANNUAL);
const WITHOUT_DEPARTMENT = ANNUAL_COLUMNS.filter((key) => key !== 'department');
// The feed's Employees set, across the cycles: the columns of all of them.
const ALL_CYCLES = columnsOf(ACME_CYCLES);

describe('audit log: every read path counts what it sent, with its columns', () => {
  let server: TestServer;
  let full: string;
  let hiding: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), wideCycleDataSet('v1')] });
    full = await server.createKey(ACME, 'full');
    hiding = await server.createKey(ACME, 'no department', { hiddenColumns: ['department'] });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The request entries of `org` written after the first `skip`. */
  async function newEntries(skip: number, org = ACME) {
    // A request's entry is taken when its response has finished on the server's side,
    // which may come a turn after the client has read the body (seen under a loaded
    // suite): that turn first, then what is kept written.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.app.audit.flush();
    return requestsOf(await auditEntriesOf(server.database.db, org)).slice(skip);
  }
  const countNow = async (org = ACME) => (await newEntries(0, org)).length;

  it('REST and delta pages: the employees of the page, the cycle, and the columns the key may read', async () => {
    const before = await countNow();
    const path = employeesPath(CYCLE.annual2025);
    expect((await server.request(`${path}?limit=2`, { key: full })).status).toBe(200);
    expect((await server.request(`${path}?limit=2`, { key: hiding })).status).toBe(200);
    const delta = await server.request(`${path}/delta?limit=3`, { key: full });
    expect(delta.status).toBe(200);
    const entries = await newEntries(before);
    expect(
      entries.map(({ route, meritCycleId, employees, columnsServed }) => ({
        route,
        meritCycleId,
        employees,
        columnsServed,
      })),
    ).toEqual([
      {
        route: '/v1/compensationPlanning/meritCycles/:meritCycleId/employees',
        meritCycleId: CYCLE.annual2025,
        employees: 2,
        columnsServed: ANNUAL_COLUMNS,
      },
      {
        route: '/v1/compensationPlanning/meritCycles/:meritCycleId/employees',
        meritCycleId: CYCLE.annual2025,
        employees: 2,
        columnsServed: WITHOUT_DEPARTMENT,
      },
      {
        route: '/v1/compensationPlanning/meritCycles/:meritCycleId/employees/delta',
        meritCycleId: CYCLE.annual2025,
        employees: 3,
        columnsServed: ANNUAL_COLUMNS,
      },
    ]);
  });

  it('a whole bulk download, NDJSON and CSV: every employee streamed, recorded when it ends', async () => {
    const before = await countNow();
    const bulk = `${employeesPath(CYCLE.annual2025)}/bulk`;
    const ndjson = await server.request(bulk, { key: full });
    expect(ndjson.status).toBe(200);
    expect((await ndjson.text()).trim().split('\n')).toHaveLength(ACME_EMPLOYEES);
    const csv = await server.request(`${bulk}?format=csv`, { key: hiding });
    expect(csv.status).toBe(200);
    await csv.text();
    const entries = await newEntries(before);
    expect(
      entries.map(({ path, status, employees, columnsServed }) => ({
        path,
        status,
        employees,
        columnsServed,
      })),
    ).toEqual([
      { path: bulk, status: 200, employees: ACME_EMPLOYEES, columnsServed: ANNUAL_COLUMNS },
      { path: bulk, status: 200, employees: ACME_EMPLOYEES, columnsServed: WITHOUT_DEPARTMENT },
    ]);
  });

  it('a bulk download the client leaves part-way: one entry, with the employees sent before it left', async () => {
    const key = await server.createKey(WIDE_ORG, 'leaver');
    const before = await countNow(WIDE_ORG);
    const bulk = `${employeesPath(WIDE_CYCLE)}/bulk`;
    const download = await pausedDownload(`${server.url}${bulk}`, { 'x-api-key': key });
    download.request.destroy();
    let entries = await newEntries(before, WIDE_ORG);
    for (const deadline = Date.now() + 10_000; entries.length === 0 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      entries = await newEntries(before, WIDE_ORG);
    }
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(entry).toMatchObject({ path: bulk, status: 200, columnsServed: ['notes', 'version'] });
    // At least the first chunk (200 employees) went out; the client left long before the
    // 2,000 (about 20 MB, far beyond the sockets' buffers).
    expect(entry?.employees).toBeGreaterThanOrEqual(200);
    expect(entry?.employees).toBeLessThan(WIDE_EMPLOYEES);
  });

  it('OData: the Employee entities sent, through a cycle too (with its id), $select, $count none', async () => {
    const before = await countNow();
    const navigation = `/odata/v4/MeritCycles('${CYCLE.annual2025}')/Employees`;
    for (const path of [
      '/odata/v4/Employees?$top=3',
      `${navigation}?$top=2`,
      `${navigation}?$select=id,department`,
      `${navigation}/$count`,
      `/odata/v4/MeritCycles('${CYCLE.annual2025}')`,
      '/odata/v4/Employees?$top=1',
    ]) {
      const key = path.endsWith('$top=1') ? hiding : full;
      expect((await server.request(path, { key })).status, path).toBe(200);
    }
    const entries = await newEntries(before);
    expect(
      entries.map(({ path, meritCycleId, employees, columnsServed }) => ({
        path,
        meritCycleId,
        employees,
        columnsServed,
      })),
    ).toEqual([
      { path: '/odata/v4/Employees', meritCycleId: null, employees: 3, columnsServed: ALL_CYCLES },
      {
        path: navigation,
        meritCycleId: CYCLE.annual2025,
        employees: 2,
        columnsServed: ANNUAL_COLUMNS,
      },
      {
        path: navigation,
        meritCycleId: CYCLE.annual2025,
        employees: ACME_EMPLOYEES,
        columnsServed: ['department'],
      },
      {
        path: `${navigation}/$count`,
        meritCycleId: CYCLE.annual2025,
        employees: 0,
        columnsServed: null,
      },
      {
        path: `/odata/v4/MeritCycles('${CYCLE.annual2025}')`,
        meritCycleId: CYCLE.annual2025,
        employees: 0,
        columnsServed: null,
      },
      {
        path: '/odata/v4/Employees',
        meritCycleId: null,
        employees: 1,
        columnsServed: ALL_CYCLES.filter((key) => key !== 'department'),
      },
    ]);
  });

  it('filters by a column served: exact and case-sensitive; only the entries whose answer carried it', async () => {
    const organization = await findOrganizationBySlug(server.database.db, ACME);
    const id = organization?.id ?? '';
    await server.app.audit.flush();
    const all = await listAuditEntries(server.database.db, id, {}, { limit: 10_000 });
    const department = await listAuditEntries(
      server.database.db,
      id,
      { column: 'department' },
      { limit: 10_000 },
    );
    expect(department.length).toBeGreaterThan(0);
    expect(department).toEqual(
      all.filter((entry) => entry.columnsServed?.includes('department') === true),
    );
    expect(
      await listAuditEntries(server.database.db, id, { column: 'Department' }, { limit: 10 }),
    ).toEqual([]);
    expect(
      await listAuditEntries(server.database.db, id, { column: 'depart' }, { limit: 10 }),
    ).toEqual([]);
  });
});
