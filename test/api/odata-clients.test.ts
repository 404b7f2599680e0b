// The OData feed read by clients nobody here wrote (docs/odata.md, "Verified by"):
// - @odata/client (npm), with its own HTTP layer and Basic credentials, reads the service
//   document, $metadata and every page of every entity set, following each
//   @odata.nextLink, and gets exactly the employees REST serves;
// - the requests Excel, Power BI (Desktop and service refresh) and Tableau send, as their
//   vendors document them, are replayed.
// On every database.
import { OData } from '@odata/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Employee } from '../../src/modules/employees/schema.js';
import { FEED_CYCLE, FEEDCO, feedDataSet } from '../fixtures/feed-data-sets.js';
import { employeesPath, walkPages } from '../helpers/api-expectations.js';
import { FEED, feedEmployeeFields } from '../helpers/feed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Entity = Record<string, unknown>;

describe('the OData feed read by clients nobody here wrote', () => {
  let server: TestServer;
  let full: string;
  let scoped: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet()] });
    full = await server.createKey(FEEDCO, 'bi');
    scoped = await server.createKey(FEEDCO, 'dashboard', {
      cycles: [FEED_CYCLE.usd],
      hiddenColumns: ['basePay'],
    });
  });
  afterAll(() => server.close());

  it('@odata/client reads the service document, $metadata and every nextLink, and gets exactly the rows REST serves', async () => {
    const serviceEndpoint = `${server.url}${FEED}/`;
    const client = OData.New4({
      serviceEndpoint,
      credential: { username: 'powerbi', password: full },
      commonHeaders: { prefer: 'odata.maxpagesize=3' },
    });
    // A URL of the service through the client's own requests (its newRequest resolves a
    // path against the service endpoint): the service document, $metadata, each nextLink.
    const request = (url: string) => {
      expect(url.startsWith(serviceEndpoint)).toBe(true);
      return client.newRequest({
        collection: url.slice(serviceEndpoint.length),
      }) as Promise<unknown>;
    };
    const service = (await request(serviceEndpoint)) as { value: { url: string }[] };
    expect(service.value.map((set) => set.url)).toEqual([
      'MeritCycles',
      'Employees',
      'ExchangeRates',
    ]);
    // The client asks for JSON (Accept: application/json): it gets CSDL JSON.
    const metadata = (await request(`${serviceEndpoint}$metadata`)) as {
      Compplan: { Employee: Record<string, { $Type?: string }> };
    };
    expect(metadata.Compplan.Employee.basePay?.$Type).toBe('Edm.Decimal');

    const read = async (set: string) => {
      const entities: Entity[] = [];
      let page = (await client.newRequest({ collection: set, params: client.newParam() })) as {
        value: Entity[];
        '@odata.nextLink'?: string;
      };
      let pages = 1;
      entities.push(...page.value);
      while (page['@odata.nextLink']) {
        page = (await request(page['@odata.nextLink'])) as typeof page;
        entities.push(...page.value);
        pages++;
      }
      return { entities, pages };
    };
    const employees = await read('Employees');
    expect(employees.pages).toBe(3);
    const rest: Entity[] = [];
    for (const cycle of Object.values(FEED_CYCLE)) {
      const walked = await walkPages<Employee>(server, full, employeesPath(cycle), { limit: 100 });
      rest.push(...walked.items.map((e) => feedEmployeeFields(e, cycle)));
    }
    const natives = (e: Entity) => ({
      id: e.id,
      meritCycleId: e.meritCycleId,
      email: e.email,
      firstName: e.firstName,
      lastName: e.lastName,
      preferredName: e.preferredName,
      currencyCode: e.currencyCode,
      currencyName: e.currencyName,
      eligibilityStatus: e.eligibilityStatus,
    });
    const byId = (a: Entity, b: Entity) => String(a.id).localeCompare(String(b.id));
    expect(employees.entities.map(natives).sort(byId)).toEqual(rest.sort(byId));

    // The client's own query builder: its $filter and $select text, as it encodes them
    // (it writes string literals without doubling a quote, so the name has none).
    const filtered = (await client.newRequest({
      collection: 'Employees',
      params: client
        .newParam()
        .select(['id', 'lastName'])
        .filter(client.newFilter().property('lastName').eq('Hopper')),
    })) as { value: Entity[] };
    expect(filtered.value).toEqual([
      { id: 'mce_60000000-0000-4000-8000-000000000003', lastName: 'Hopper' },
    ]);
    const cycles = await read('MeritCycles');
    expect(cycles.entities.map((c) => c.id)).toEqual([FEED_CYCLE.eur, FEED_CYCLE.usd]);
    const rates = await read('ExchangeRates');
    expect(rates.entities).toHaveLength(4);
  });

  // Power Query (Excel's Get Data → From OData Feed, Power BI Desktop, and the Power BI
  // service's scheduled refresh run the same OData.Feed function):
  // https://learn.microsoft.com/en-us/powerquery-m/odata-feed — the service's version is
  // read from the OData-Version header it returns; requests ask for versions up to 4.0.
  // https://learn.microsoft.com/en-us/power-query/connectors/odata-feed — Basic
  // authentication (user name and password) is one of the feed's credential kinds, and the
  // service reads every page the feed's nextLinks name.
  it('serves the requests Power Query (Excel, Power BI Desktop, Power BI service refresh) sends', async () => {
    const root = `${server.url}${FEED}/`;
    const basic = `Basic ${Buffer.from(`someone@example.com:${full}`).toString('base64')}`;
    const versions = { 'odata-maxversion': '4.0', 'odata-version': '4.0' };
    // Anonymous first: the 401 says Basic, so the credential dialog offers it.
    const anonymous = await fetch(root, { headers: versions });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="compplan"');
    const service = await fetch(root, {
      headers: {
        ...versions,
        authorization: basic,
        accept:
          'application/json;odata.metadata=minimal;q=1.0,application/json;odata=minimalmetadata;q=0.9,application/atomsvc+xml;q=0.8,application/atom+xml;q=0.8,application/xml;q=0.7,text/plain;q=0.7',
      },
    });
    expect(service.status).toBe(200);
    expect(service.headers.get('odata-version')).toBe('4.0');
    const metadata = await fetch(`${root}$metadata`, {
      headers: { ...versions, authorization: basic, accept: 'application/xml' },
    });
    expect(metadata.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    // The CSDL it reads (checked against OASIS's schemas in test/interop).
    expect(await metadata.text()).toMatch(/^<\?xml [^>]*\?>\s*<edmx:Edmx /);
    // Every page of a table, as the navigator's preview and the load read it.
    let url: string | undefined = `${root}Employees`;
    const seen: string[] = [];
    while (url) {
      const page = await fetch(url, {
        headers: { ...versions, authorization: basic, prefer: 'odata.maxpagesize=2' },
      });
      expect(page.status).toBe(200);
      expect(page.headers.get('preference-applied')).toBe('odata.maxpagesize=2');
      const body = (await page.json()) as { value: Entity[]; '@odata.nextLink'?: string };
      seen.push(...body.value.map((e) => String(e.id)));
      url = body['@odata.nextLink'];
    }
    expect(seen).toHaveLength(8);
    // Query folding of a filtered, counted preview.
    const folded = await fetch(
      `${root}Employees?$filter=${encodeURIComponent("eligibilityStatus eq 'eligible'")}&$select=id,basePay&$top=1000&$count=true`,
      { headers: { ...versions, authorization: basic } },
    );
    expect(((await folded.json()) as { '@odata.count': number })['@odata.count']).toBe(7);
  });

  // Tableau Desktop: https://help.tableau.com/current/pro/desktop/en-us/examples_odata.htm —
  // a service URL, "Username and Password" authentication, OData V4, read into an extract.
  it('serves the requests Tableau sends: service URL, Basic credentials, metadata, every page into an extract', async () => {
    const root = `${server.url}${FEED}/`;
    const basic = `Basic ${Buffer.from(`tableau:${scoped}`).toString('base64')}`;
    const service = await fetch(root, { headers: { authorization: basic } });
    const sets = ((await service.json()) as { value: { url: string }[] }).value.map((s) => s.url);
    const metadata = await fetch(`${root}$metadata`, { headers: { authorization: basic } });
    expect(metadata.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(await metadata.text()).not.toContain('Name="basePay"');
    const rows: Record<string, number> = {};
    for (const set of sets) {
      let url: string | undefined = `${root}${set}`;
      rows[set] = 0;
      while (url) {
        const page = await fetch(url, { headers: { authorization: basic } });
        const body = (await page.json()) as { value: Entity[]; '@odata.nextLink'?: string };
        rows[set] += body.value.length;
        url = body['@odata.nextLink'];
      }
    }
    expect(rows).toEqual({ MeritCycles: 1, Employees: 7, ExchangeRates: 3 });
  });
});
