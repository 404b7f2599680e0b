// Least privilege on the OData feed (docs/odata.md, "Per key"), like REST's isolation
// matrices: a key with a cycle scope and hidden columns, and another organisation's key, each
// see in $metadata and in rows only what they may read; every way of naming what they may
// not read is the 404 of a cycle nobody has, or the 400 of a skip token not theirs; an
// expired, revoked or rolled key is refused as on REST; and the same URL asked by keys of
// different scopes, one after the other, is answered for each key's scope. On every database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listOrganizationApiKeys,
  revokeApiKeyById,
  rollApiKeyById,
} from '../../src/api-keys/service.js';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { FEED_CYCLE, FEEDCO, feedDataSet } from '../fixtures/feed-data-sets.js';
import { feed, walk } from '../helpers/feed.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const MISSING = 'mc_00000000-0000-4000-8000-000000000000';
const EUR_EMPLOYEE = 'mce_60000000-0000-4000-8000-100000000001';
const ACME_ADA = 'mce_10000000-0000-4000-8000-00000000a001';
const HOUR = 3_600_000;

describe('least privilege on the OData feed', () => {
  const clock = new TestClock();
  let server: TestServer;
  let full: string;
  let scoped: string;
  let acme: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet(), acmeDataSet()], now: clock.now });
    full = await server.createKey(FEEDCO, 'full');
    scoped = await server.createKey(FEEDCO, 'dashboard', {
      cycles: [FEED_CYCLE.usd],
      hiddenColumns: ['basePay', 'bonus %'],
    });
    acme = await server.createKey(ACME, 'acme');
  });
  afterAll(() => server.close());

  it("leaves scoped-out cycles' columns and hidden columns out of $metadata, per key, for the same URL", async () => {
    for (let round = 0; round < 2; round++) {
      const fullXml = (await feed(server, '/$metadata', { key: full })).text;
      const scopedXml = (await feed(server, '/$metadata', { key: scoped })).text;
      const acmeXml = (await feed(server, '/$metadata', { key: acme })).text;
      for (const name of ['basePay', 'bonus__', 'salary', 'hireDate']) {
        expect(fullXml).toContain(`<Property Name="${name}"`);
      }
      // Hidden, or only in a cycle out of scope: absent. The department is text in the
      // only cycle the scoped key reads.
      for (const name of ['basePay', 'bonus__', 'salary']) {
        expect(scopedXml).not.toContain(`Name="${name}"`);
      }
      expect(scopedXml).not.toContain('bonus %');
      expect(scopedXml).toContain('<Property Name="hireDate" Type="Edm.Date">');
      // Acme's columns, none of Feed Co's.
      expect(acmeXml).toContain('<Property Name="employee_jobTitle"');
      expect(acmeXml).not.toContain('Name="hireDate"');
      const json = (await feed(server, '/$metadata?$format=json', { key: scoped })).json;
      expect(Object.keys(json.Compplan.Employee)).not.toContain('basePay');
    }
  });

  it('serves the scoped key only its cycle, its employees without hidden columns, its rates', async () => {
    const employees = await walk(server, '/Employees', scoped);
    expect(employees.entities.map((e) => e.meritCycleId)).toEqual(Array(7).fill(FEED_CYCLE.usd));
    for (const entity of employees.entities) {
      expect(Object.keys(entity)).not.toContain('basePay');
      expect(Object.keys(entity)).not.toContain('salary');
    }
    const text = (await feed(server, '/Employees?$select=id', { key: scoped })).text;
    expect(text).not.toContain(EUR_EMPLOYEE);
    const cycles = await feed(server, '/MeritCycles?$select=id', { key: scoped });
    expect(cycles.json.value).toEqual([{ id: FEED_CYCLE.usd }]);
    const rates = await feed(server, '/ExchangeRates?$select=meritCycleId', { key: scoped });
    expect(new Set(rates.json.value.map((r: { meritCycleId: string }) => r.meritCycleId))).toEqual(
      new Set([FEED_CYCLE.usd]),
    );
    expect((await feed(server, '/Employees/$count', { key: scoped })).text).toBe('7');
    // Filtering on a hidden column, or matching the other cycle, finds nothing to show.
    const hidden = await feed(server, '/Employees?$filter=basePay gt 0', { key: scoped });
    expect(hidden.status).toBe(400);
    expect(hidden.json.error.message).toBe('$filter: Employee has no property basePay');
    const other = await feed(server, `/Employees?$filter=meritCycleId eq '${FEED_CYCLE.eur}'`, {
      key: scoped,
    });
    expect(other.json.value).toEqual([]);
  });

  it('answers every way of naming what a key may not read exactly as a cycle nobody has', async () => {
    const paths = (id: string) => [
      `/MeritCycles('${id}')`,
      `/MeritCycles('${id}')/Employees`,
      `/MeritCycles('${id}')/Employees/$count`,
      `/MeritCycles('${id}')/ExchangeRates?$top=1`,
      `/MeritCycles(id='${id}')?$select=name`,
      `/MeritCycles('${encodeURIComponent(id)}')/Employees`,
    ];
    const cases: [string, string][] = [
      [scoped, FEED_CYCLE.eur],
      [acme, FEED_CYCLE.usd],
      [full, CYCLE.annual2025],
      [scoped, FEED_CYCLE.eur.toUpperCase()],
    ];
    for (const [key, id] of cases) {
      for (const [index, path] of paths(id).entries()) {
        const refused = await feed(server, path, { key });
        const missing = await feed(server, paths(MISSING)[index] as string, { key });
        expect(refused.status, path).toBe(404);
        expect(refused.text, path).toBe(missing.text);
        expect(refused.json).toEqual({ error: { code: '404', message: 'Merit cycle not found' } });
        const head = await fetch(`${server.url}/odata/v4${path}`, {
          method: 'HEAD',
          headers: { 'x-api-key': key },
        });
        expect(head.status, `HEAD ${path}`).toBe(404);
      }
    }
    // Employees of another organisation, or of a cycle out of scope, by id.
    for (const [key, id] of [
      [acme, EUR_EMPLOYEE],
      [scoped, EUR_EMPLOYEE],
      [full, ACME_ADA],
    ] as const) {
      const response = await feed(server, `/Employees('${id}')`, { key });
      expect(response.status).toBe(404);
      expect(response.json.error.message).toBe('Employee not found');
    }
    const acmeEmployees = await walk(server, '/Employees?$select=id,meritCycleId', acme);
    expect(acmeEmployees.entities.some((e) => String(e.meritCycleId).startsWith('mc_6'))).toBe(
      false,
    );
  });

  it("refuses another reader's skip token with 400: another scope's, another organisation's", async () => {
    const tokenOf = async (key: string) => {
      const page = await feed(server, '/Employees?$select=id', {
        key,
        headers: { prefer: 'odata.maxpagesize=1' },
      });
      return new URL(page.json['@odata.nextLink']).searchParams.get('$skiptoken') as string;
    };
    const tokens = {
      full: await tokenOf(full),
      scoped: await tokenOf(scoped),
      acme: await tokenOf(acme),
    };
    for (const [key, foreign] of [
      [scoped, tokens.full],
      [full, tokens.scoped],
      [full, tokens.acme],
      [acme, tokens.full],
    ] as const) {
      const response = await feed(
        server,
        `/Employees?$select=id&$skiptoken=${encodeURIComponent(foreign)}`,
        { key },
      );
      expect(response.status).toBe(400);
      expect(response.json.error.message).toMatch(/\$skiptoken is not valid/);
    }
  });

  it('refuses expired, revoked and rolled-past-grace keys as REST does: 401 with the challenge', async () => {
    const expiring = await server.createKey(FEEDCO, 'expiring', { expiresIn: '1h' });
    const revoked = await server.createKey(FEEDCO, 'revoked');
    const rolled = await server.createKey(FEEDCO, 'rolled');
    const keys = await listOrganizationApiKeys(server.database.db, FEEDCO);
    const idOf = (secret: string) => keys.find((k) => secret.startsWith(k.prefix))?.id as string;
    for (const key of [expiring, revoked, rolled]) {
      expect((await feed(server, '/$metadata', { basic: key })).status).toBe(200);
    }
    await revokeApiKeyById(server.database.db, idOf(revoked));
    const successor = (await rollApiKeyById(server.database.db, idOf(rolled), '30m', clock.now()))
      .key;
    await server.app.apiKeys.confirm();
    clock.advance(HOUR);
    for (const key of [expiring, revoked, rolled]) {
      for (const options of [{ key }, { basic: key }]) {
        const response = await feed(server, '/Employees?$top=1', options);
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="compplan"');
        expect(response.json).toEqual({
          error: { code: '401', message: 'Missing or invalid API key' },
        });
      }
    }
    expect((await feed(server, '/Employees/$count', { basic: successor })).text).toBe('8');
  });
});
