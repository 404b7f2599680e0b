// The audit log's entries of API requests (docs/security.md, "Audit log"): one for every
// request that carried a valid key, whatever its status, with what was read and by whom;
// none for a request without a valid key; never the query string, never employee data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOrganizationApiKeys } from '../../src/api-keys/service.js';
import { ACME, acmeDataSet, CYCLE, GLOBEX, globexDataSet } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { auditEntriesOf, requestsOf } from './helpers.js';

const CYCLES = '/v1/compensationPlanning/meritCycles';
const EMPLOYEES = `${CYCLES}/${CYCLE.annual2025}/employees`;

describe('audit log: API requests', () => {
  let server: TestServer;
  let key: string;
  let keyId: string;
  let globexKey: string;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [acmeDataSet(), globexDataSet()],
      rateLimitPerSecond: 5,
    });
    key = await server.createKey(ACME, 'reader');
    globexKey = await server.createKey(GLOBEX, 'globex reader');
    const keys = await listOrganizationApiKeys(server.database.db, ACME);
    keyId = keys.find((k) => key.startsWith(k.prefix))?.id ?? '';
  });
  afterAll(async () => {
    await server?.close();
  });

  it('records each request with a valid key — 200, 304, 404, 422, 429 — with route, path without its query, cycle, status, employees served, address, user agent and request id', async () => {
    const agent = { 'user-agent': 'audit-test/1.0' };
    const page = await server.request(`${EMPLOYEES}?limit=3`, { key, headers: agent });
    expect(page.status).toBe(200);
    const etag = page.headers.get('etag') ?? '';
    // The same page again: a kept answer, its employees counted the same.
    expect((await server.request(`${EMPLOYEES}?limit=3`, { key, headers: agent })).status).toBe(
      200,
    );
    const notModified = await server.request(`${EMPLOYEES}?limit=3`, {
      key,
      headers: { ...agent, 'if-none-match': etag },
    });
    expect(notModified.status).toBe(304);
    expect(
      (await server.request(`${CYCLES}/mc_00000000-0000-4000-8000-000000000000`, { key })).status,
    ).toBe(404);
    expect((await server.request('/no-such-path', { key })).status).toBe(404);
    expect((await server.request(`${CYCLES}?limit=0`, { key })).status).toBe(422);
    // Six at a quota of five a second: one 429 at least.
    const pings: number[] = [];
    for (let n = 0; n < 6; n++) pings.push((await server.request('/ping', { key })).status);
    expect(pings).toContain(429);

    await server.app.audit.flush();
    const entries = requestsOf(await auditEntriesOf(server.database.db, ACME));
    expect(entries.map((entry) => entry.status)).toEqual([200, 200, 304, 404, 404, 422, ...pings]);
    const [first, second, third, unknownCycle, unknownPath] = entries;
    expect(first).toMatchObject({
      action: 'api.request',
      keyId,
      method: 'GET',
      route: '/v1/compensationPlanning/meritCycles/:meritCycleId/employees',
      path: EMPLOYEES,
      meritCycleId: CYCLE.annual2025,
      status: 200,
      employees: 3,
      clientAddress: '127.0.0.1',
      userAgent: 'audit-test/1.0',
      actor: null,
    });
    expect(first?.requestId).toBe(page.headers.get('x-request-id'));
    expect(second).toMatchObject({ status: 200, employees: 3 });
    expect(third).toMatchObject({ status: 304, employees: 0 });
    expect(unknownCycle).toMatchObject({
      route: '/v1/compensationPlanning/meritCycles/:id',
      meritCycleId: 'mc_00000000-0000-4000-8000-000000000000',
      employees: 0,
    });
    expect(unknownPath).toMatchObject({ route: null, path: '/no-such-path', meritCycleId: null });
    // Every entry is the key's own organisation's: none in Globex's log.
    expect(requestsOf(await auditEntriesOf(server.database.db, GLOBEX))).toEqual([]);
  });

  it('records nothing for a request without a key or with an unknown one', async () => {
    await server.app.audit.flush();
    const before = (await auditEntriesOf(server.database.db, ACME)).length;
    expect((await server.request('/ping', { key: null })).status).toBe(401);
    expect((await server.request('/ping', { key: 'cpk_not-a-real-key' })).status).toBe(401);
    await server.app.audit.flush();
    expect(await auditEntriesOf(server.database.db, ACME)).toHaveLength(before);
  });

  it("records each organisation's requests in its own log only", async () => {
    expect((await server.request(CYCLES, { key: globexKey })).status).toBe(200);
    await server.app.audit.flush();
    const globex = requestsOf(await auditEntriesOf(server.database.db, GLOBEX));
    expect(globex.map((entry) => entry.path)).toEqual([CYCLES]);
    const acme = requestsOf(await auditEntriesOf(server.database.db, ACME));
    expect(acme.every((entry) => entry.keyId === keyId)).toBe(true);
  });

  it('keeps each value as the client sent it, quotes, backslashes, braces and commas included, in a batch of several entries', async () => {
    // What PostgreSQL's array literals quote and escape (its insert sends a column an array).
    const agents = ['Power BI "Desktop" {1,2}', 'C:\\tools\\curl\\', 'NULL', ','];
    for (const agent of agents) {
      const answer = await server.request(`${CYCLES}/mc_"{a,b}"`, {
        key: globexKey,
        headers: { 'user-agent': agent },
      });
      expect(answer.status).toBe(404);
    }
    await server.app.audit.flush();
    const written = requestsOf(await auditEntriesOf(server.database.db, GLOBEX)).slice(-4);
    expect(written.map((entry) => entry.userAgent)).toEqual(agents);
    for (const entry of written) {
      expect(entry).toMatchObject({
        path: `${CYCLES}/mc_%22%7Ba,b%7D%22`,
        meritCycleId: 'mc_"{a,b}"',
        status: 404,
        employees: 0,
      });
    }
  });
});
