// The OData feed read by a client generated from its $metadata (docs/odata.md, "Verified
// by"): odata2ts (@odata2ts/odata2ts, its CLI run with a configuration file, as its users
// run it) downloads $metadata with a key and generates TypeScript services from it; the
// generated service, through odata2ts's own HTTP client (@odata2ts/http-client-fetch, the
// key as Basic password or in x-api-key), reads every entity set page by page (following each
// @odata.nextLink) and gets exactly the rows REST serves, and uses every capability
// $metadata declares through its query builder, each with the rows the fixture says. On
// every database.
//
// Where the query builder (@odata2ts/odata-query-objects 0.21) does not write what the
// feed serves, the test says so and uses the nearest it does: its in() writes
// `p eq a or p eq b` (an `in` list goes as a filter expression of its text); it writes a
// string between quotes as given (a quote is doubled by the caller); the generated
// services have no call for a next link (the HTTP client reads it).
// The generator reads TypeScript's compiler API without declaring it; TypeScript 7 has
// none, so package.json `overrides` gives @odata2ts/odata2ts its own TypeScript 5.9.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { FetchClient } from '@odata2ts/http-client-fetch';
import {
  type QBigNumberPath,
  type QBooleanPath,
  type QDatePath,
  type QDateTimeOffsetPath,
  type QEntityCollectionPath,
  QFilterExpression,
  type QNumberPath,
  type QStringPath,
  type QueryObject,
} from '@odata2ts/odata-query-objects';
import type { EntitySetServiceV4, EntityTypeServiceV4 } from '@odata2ts/odata-service';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Employee } from '../../src/modules/employees/schema.js';
import type { MeritCycle } from '../../src/modules/merit-cycles/schema.js';
import { FEED_CYCLE, FEEDCO, feedDataSet } from '../fixtures/feed-data-sets.js';
import { employeesPath, MERIT_CYCLES, ratesPath, walkPages } from '../helpers/api-expectations.js';
import { FEED, feedEmployeeFields } from '../helpers/feed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GENERATOR = join(REPO_ROOT, 'node_modules/@odata2ts/odata2ts/lib/run-cli.js');

type Entity = Record<string, unknown>;

// The generated service as the test uses it. Its files are written while the test runs, so
// their types are described here (the generated query objects are checked against
// $metadata below): each entity set is odata2ts's EntitySetServiceV4, each entity its
// EntityTypeServiceV4, with the generated query object (a QStringPath per Edm.String, …).
interface QMeritCycle extends QueryObject {
  id: QStringPath;
  name: QStringPath;
  startDate: QDateTimeOffsetPath;
  currency: QStringPath;
  Employees: QEntityCollectionPath<QEmployee>;
}
interface QEmployee extends QueryObject {
  id: QStringPath;
  email: QStringPath;
  lastName: QStringPath;
  preferredName: QStringPath;
  eligibilityStatus: QStringPath;
  basePay: QNumberPath;
  department: QStringPath;
  hireDate: QDatePath;
  remote: QBooleanPath;
}
interface QExchangeRate extends QueryObject {
  currency: QStringPath;
  rate: QNumberPath;
}
/** With v4BigNumberAsString, Edm.Decimal is a QBigNumberPath (a string). */
interface QEmployeeExact extends QueryObject {
  id: QStringPath;
  basePay: QBigNumberPath;
}
type EntitySet<Q extends QueryObject> = EntitySetServiceV4<FetchClient, Entity, Entity, Q, unknown>;
type OneEntity<Q extends QueryObject> = EntityTypeServiceV4<FetchClient, Entity, Entity, Q>;
interface OneMeritCycle extends OneEntity<QMeritCycle> {
  Employees(): EntitySet<QEmployee>;
  ExchangeRates(): EntitySet<QExchangeRate>;
}
interface GeneratedService<QE extends QueryObject = QEmployee> {
  MeritCycles(): EntitySet<QMeritCycle>;
  MeritCycles(id: string): OneMeritCycle;
  Employees(): EntitySet<QE>;
  Employees(id: string): OneEntity<QE>;
  ExchangeRates(): EntitySet<QExchangeRate>;
  ExchangeRates(id: { meritCycleId: string; currency: string }): OneEntity<QExchangeRate>;
}

/** odata2ts's fetch client, recording the URL of each GET it sends. */
class RecordingClient extends FetchClient {
  readonly urls: string[] = [];
  override get<ResponseModel>(...args: Parameters<FetchClient['get']>) {
    this.urls.push(args[0]);
    return super.get<ResponseModel>(...args);
  }
}

const employee = (n: number) => `mce_60000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const EVA = 'mce_60000000-0000-4000-8000-100000000001';
const ids = (entities: Entity[]) => entities.map((entity) => entity.id);

describe('the OData feed read by a client odata2ts generated from its $metadata', () => {
  let server: TestServer;
  let key: string;
  let authorization: string;
  let generated: string;
  let metadata: string;
  let client: RecordingClient;
  let service: GeneratedService;
  let exact: GeneratedService<QEmployeeExact>;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet()] });
    key = await server.createKey(FEEDCO, 'odata2ts');
    authorization = `Basic ${Buffer.from(`odata2ts:${key}`).toString('base64')}`;
    const root = `${server.url}${FEED}`;

    // Inside the repository (test/.generated-*, git-ignored), so that the generated files'
    // imports of @odata2ts/* resolve to its node_modules. odata2ts reads the tsconfig.json
    // of its working directory; the same file tells vitest how to transpile its output.
    generated = await mkdtemp(join(REPO_ROOT, 'test', '.generated-odata2ts-'));
    await writeFile(
      join(generated, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler' },
      }),
    );
    // odata2ts's configuration file: the first service downloads $metadata from the feed
    // (odata2ts's own request, the key as Basic password) into metadata.xml and generates
    // from it; the second generates from the same file with v4BigNumberAsString, which
    // asks for IEEE754Compatible=true.
    const config = {
      emitMode: 'ts',
      services: {
        Compplan: {
          sourceUrl: root,
          sourceUrlConfig: { username: 'odata2ts', password: key },
          source: 'metadata.xml',
          output: 'out',
          serviceName: 'Compplan',
        },
        CompplanIeee754: {
          source: 'metadata.xml',
          output: 'out-ieee754',
          serviceName: 'Compplan',
          v4BigNumberAsString: true,
        },
      },
    };
    await writeFile(
      join(generated, 'odata2ts.config.cjs'),
      `module.exports = ${JSON.stringify(config)};\n`,
    );
    // The download is axios's, which would send it through a proxy named in the environment.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/_proxy$/i.test(name)),
    );
    await promisify(execFile)(process.execPath, [GENERATOR], { cwd: generated, env });
    metadata = await readFile(join(generated, 'metadata.xml'), 'utf8');

    const load = async (dir: string) =>
      (
        (await import(pathToFileURL(join(generated, dir, 'CompplanService.ts')).href)) as {
          CompplanService: new (client: FetchClient, basePath: string) => unknown;
        }
      ).CompplanService;
    // The fetch client's settings (RequestInit's cache, as its default) and its headers.
    client = new RecordingClient({
      cache: 'no-store',
      headers: { authorization, prefer: 'odata.maxpagesize=3' },
    });
    service = new (await load('out'))(client, root) as GeneratedService;
    exact = new (await load('out-ieee754'))(
      // This one sends the key in x-api-key.
      new FetchClient({ cache: 'no-store', headers: { 'x-api-key': key } }),
      root,
    ) as GeneratedService<QEmployeeExact>;
  });
  afterAll(async () => {
    await server.close();
    if (generated) await rm(generated, { recursive: true, force: true });
  });

  /**
   * Every entity of a query: its first page from the generated service, then each next
   * link; `sent`: the URL of the first request, as the generated service wrote it.
   */
  async function readAll<Q extends QueryObject>(
    set: EntitySet<Q>,
    query?: Parameters<EntitySet<Q>['query']>[0],
  ): Promise<{ entities: Entity[]; pages: number; count?: number; sent: string }> {
    const before = client.urls.length;
    const first = await set.query(query);
    const sent = client.urls[before] ?? '';
    expect(first.status).toBe(200);
    expect(first.headers['preference-applied']).toBe('odata.maxpagesize=3');
    const entities = [...first.data.value];
    let pages = 1;
    // The generated services have no call for a next link: the client's own HTTP client
    // reads it, with the same headers.
    let next = first.data['@odata.nextLink'];
    while (next) {
      const page = await client.get<{ value: Entity[]; '@odata.nextLink'?: string }>(next);
      entities.push(...page.data.value);
      pages++;
      next = page.data['@odata.nextLink'];
    }
    const count = first.data['@odata.count'];
    return { entities, pages, sent, ...(count !== undefined && { count }) };
  }

  it('downloads $metadata as CSDL XML and generates a model, query objects and services with every property of it', async () => {
    // What odata2ts stored is the CSDL XML the feed serves any client (axios asks for
    // application/json, text/plain or */*: XML, docs/odata.md).
    const response = await fetch(`${server.url}${FEED}/$metadata`, {
      headers: { authorization, accept: 'application/xml' },
    });
    expect(metadata).toBe(await response.text());
    expect(metadata).toMatch(/^<\?xml [^>]*\?>\s*<edmx:Edmx /);
    expect((await readdir(join(generated, 'out'))).sort()).toEqual([
      'CompplanModel.ts',
      'CompplanService.ts',
      'QCompplan.ts',
    ]);
    const q = (await import(pathToFileURL(join(generated, 'out', 'QCompplan.ts')).href)) as Record<
      string,
      object
    >;
    for (const [type, qObject] of [
      ['MeritCycle', q.qMeritCycle],
      ['Employee', q.qEmployee],
      ['ExchangeRate', q.qExchangeRate],
    ] as const) {
      const declared = new RegExp(`<EntityType Name="${type}">(.*?)</EntityType>`).exec(
        metadata,
      )?.[1];
      const names = [...(declared ?? '').matchAll(/<(?:Navigation)?Property Name="(\w+)"/g)].map(
        (match) => match[1],
      );
      const paths = Object.entries(qObject ?? {})
        .filter(
          ([, value]) => typeof (value as { getPath?: unknown } | null)?.getPath === 'function',
        )
        .map(([name]) => name);
      expect(paths, type).toEqual(names);
    }
    // Employee's column properties, typed from $metadata.
    const path = (name: string) => (q.qEmployee as Record<string, object>)[name]?.constructor.name;
    expect(
      ['basePay', 'hireDate', 'remote', 'department', 'employee_jobTitle', 'bonus__'].map(path),
    ).toEqual([
      'QNumberPath',
      'QDatePath',
      'QBooleanPath',
      'QStringPath',
      'QStringPath',
      'QNumberPath',
    ]);
  });

  it('reads every entity set page by page, following each nextLink, and gets exactly the rows REST serves', async () => {
    const employees = await readAll(service.Employees());
    expect(employees.pages).toBe(3);
    const rest: Entity[] = [];
    for (const cycle of Object.values(FEED_CYCLE)) {
      const walked = await walkPages<Employee>(server, key, employeesPath(cycle), { limit: 100 });
      for (const e of walked.items) {
        const column = (name: string) => e.columns[name]?.value;
        const amount = (value: unknown) =>
          value == null ? null : Number(Object.values(value as Record<string, string>)[0]);
        const part = (name: string) =>
          (column('employee') as Record<string, string> | undefined)?.[name] ?? null;
        rest.push({
          ...feedEmployeeFields(e, cycle),
          basePay: amount(column('basePay')),
          bonus__: column('bonus %') == null ? null : Number(column('bonus %')),
          compaRatio: column('compaRatio') == null ? null : Number(column('compaRatio')),
          department: column('department') === undefined ? null : String(column('department')),
          employee_fullName: part('fullName'),
          employee_jobTitle: part('jobTitle'),
          hireDate: column('hireDate') ?? null,
          rating: column('rating') === undefined ? null : JSON.stringify(column('rating')),
          remote: column('remote') ?? null,
          salary: amount(column('salary')),
        });
      }
    }
    const byId = (a: Entity, b: Entity) => String(a.id).localeCompare(String(b.id));
    expect(employees.entities.sort(byId)).toEqual(rest.sort(byId));

    const cycles = await readAll(service.MeritCycles());
    const restCycles = await walkPages<MeritCycle>(server, key, MERIT_CYCLES, { limit: 100 });
    const restRates: Entity[] = [];
    for (const cycle of restCycles.items) {
      const rates = (await (await server.request(ratesPath(cycle.id), { key })).json()) as {
        base: string;
        rates: Record<string, number>;
      };
      restRates.push(
        ...Object.entries(rates.rates).map(([currency, rate]) => ({
          meritCycleId: cycle.id,
          base: rates.base,
          currency,
          rate,
        })),
      );
      (cycle as Entity).currency = rates.base;
    }
    expect(cycles.entities).toEqual(restCycles.items);
    expect(cycles.pages).toBe(1);

    const rates = await readAll(service.ExchangeRates());
    expect(rates.pages).toBe(2);
    // The set's own order: meritCycleId, currency.
    const byKey = (a: Entity, b: Entity) =>
      String(a.meritCycleId).localeCompare(String(b.meritCycleId)) ||
      String(a.currency).localeCompare(String(b.currency));
    expect(rates.entities).toEqual(restRates.sort(byKey));
    expect(rates.entities).toHaveLength(4);

    // What the generated service sent: the set's URL, then the feed's next links unchanged.
    expect(client.urls.filter((url) => url.includes('/Employees'))).toEqual([
      `${server.url}${FEED}/Employees`,
      expect.stringMatching(/\/Employees\?\$skiptoken=/),
      expect.stringMatching(/\/Employees\?\$skiptoken=/),
    ]);
  });

  it('reads one entity by key, and a merit cycle’s employees and exchange rates by navigation', async () => {
    const one = await service.Employees(employee(3)).query();
    expect(one.data).toMatchObject({
      id: employee(3),
      lastName: 'Hopper',
      basePay: 103000.5,
      compaRatio: null,
      hireDate: '2013-04-15',
      remote: true,
    });
    const cycle = await service
      .MeritCycles(FEED_CYCLE.eur)
      .query((b) => b.select('name', 'currency'));
    expect(cycle.data).toEqual({
      '@odata.context': `${server.url}${FEED}/$metadata#MeritCycles(name,currency)/$entity`,
      name: 'Feed Mid-Year',
      currency: 'EUR',
    });
    const usd = await readAll(service.MeritCycles(FEED_CYCLE.usd).Employees(), (b) =>
      b.select('id'),
    );
    expect(ids(usd.entities).sort()).toEqual([1, 2, 3, 4, 5, 6, 7].map(employee));
    const eur = await service.MeritCycles(FEED_CYCLE.eur).ExchangeRates().query();
    expect(eur.data.value).toEqual([
      { meritCycleId: FEED_CYCLE.eur, base: 'EUR', currency: 'USD', rate: 1.09 },
    ]);
  });

  it('filters with every function $metadata declares (FilterFunctions), through the query builder', async () => {
    // The declared functions, as $metadata lists them, each with the query builder's call
    // for it and the employees the fixture says it selects.
    const declared =
      /<Annotation Term="Capabilities\.FilterFunctions"><Collection>(.*?)<\/Collection>/
        .exec(metadata)?.[1]
        ?.match(/(?<=<String>)\w+(?=<\/String>)/g);
    const cases: Record<string, [(q: QEmployee) => QFilterExpression, string, string[]]> = {
      contains: [
        (q) => q.lastName.contains('o'),
        "contains(lastName,'o')",
        [employee(1), employee(3)],
      ],
      startswith: [
        (q) => q.lastName.startsWith('L'),
        "startswith(lastName,'L')",
        [employee(1), employee(6), employee(7)],
      ],
      endswith: [
        (q) => q.lastName.endsWith('er'),
        "endswith(lastName,'er')",
        [employee(3), employee(4), EVA],
      ],
      tolower: [
        (q) => q.lastName.toLower().eq('hopper'),
        "tolower(lastName) eq 'hopper'",
        [employee(3)],
      ],
      toupper: [
        (q) => q.lastName.toUpper().eq('LEE'),
        "toupper(lastName) eq 'LEE'",
        [employee(6), employee(7)],
      ],
      trim: [
        (q) => q.department.trim().eq('Engineering'),
        "trim(department) eq 'Engineering'",
        [employee(2), employee(4), employee(6)],
      ],
      // Code points: Åberg is five.
      length: [(q) => q.lastName.length().eq(5), 'length(lastName) eq 5', [employee(5)]],
      year: [(q) => q.hireDate.year().eq(2013), 'year(hireDate) eq 2013', [employee(3)]],
      month: [(q) => q.hireDate.month().eq(8), 'month(hireDate) eq 8', [employee(7)]],
      // Eva has no hire date: day(null) is null, not 15.
      day: [
        (q) => q.hireDate.day().eq(15),
        'day(hireDate) eq 15',
        [1, 2, 3, 4, 5, 6, 7].map(employee),
      ],
    };
    expect(Object.keys(cases)).toEqual(declared);
    for (const [name, [filter, sent, expected]] of Object.entries(cases)) {
      const read = await readAll(service.Employees(), (b, q) => b.select('id').filter(filter(q)));
      expect(ids(read.entities).sort(), name).toEqual(expected);
      expect(decodeURIComponent(read.sent)).toContain(`$filter=${sent}`);
    }
    // On Edm.DateTimeOffset too (in UTC).
    const june = await service
      .MeritCycles()
      .query((b, q) => b.select('id').filter(q.startDate.month().eq(6)));
    expect(ids(june.data.value)).toEqual([FEED_CYCLE.eur]);
  });

  it('filters with comparisons, in, null, not, and, or', async () => {
    let sent = '';
    const filtered = async (filter: (q: QEmployee) => QFilterExpression) => {
      const read = await readAll(service.Employees(), (b, q) => b.select('id').filter(filter(q)));
      sent = decodeURIComponent(read.sent);
      return ids(read.entities).sort();
    };
    // The builder's in() writes `eq … or eq …`, not OData 4.01's `in`; an `in` expression,
    // which the feed serves, goes through the builder as a filter expression of its text.
    expect(await filtered((q) => q.department.in('Engineering', '42'))).toEqual([
      employee(2),
      employee(4),
      employee(6),
      EVA,
    ]);
    expect(sent).toContain("$filter=(department eq 'Engineering' or department eq '42')");
    expect(
      await filtered(() => new QFilterExpression("department in ('Engineering','42')")),
    ).toEqual([employee(2), employee(4), employee(6), EVA]);
    expect(sent).toContain("$filter=department in ('Engineering','42')");
    expect(await filtered((q) => q.preferredName.isNull())).toEqual([
      employee(1),
      employee(3),
      employee(5),
      employee(7),
      EVA,
    ]);
    expect(await filtered((q) => q.remote.isTrue().and(q.basePay.gt(105000)))).toEqual([
      employee(5),
      employee(7),
    ]);
    expect(
      await filtered((q) => q.eligibilityStatus.eq('ineligible').or(q.basePay.le(70000)).not()),
    ).toEqual([1, 2, 3, 5, 6, 7].map(employee));
    expect(sent).toContain("$filter=not((eligibilityStatus eq 'ineligible' or basePay le 70000))");
    expect(await filtered((q) => q.hireDate.ge('2016-01-01').and(q.email.ne('x')))).toEqual([
      employee(6),
      employee(7),
    ]);
    // The builder writes a string value between quotes as it is: a quote in it must be
    // doubled by the caller (OData's ''), or the feed answers 400 rather than misread it.
    expect(await filtered((q) => q.lastName.eq("O''Brien"))).toEqual([employee(2)]);
    await expect(
      service.Employees().query((b, q) => b.filter(q.lastName.eq("O'Brien"))),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('orders by several keys either way, skips, tops, counts and selects, across pages', async () => {
    const byPay = await readAll(service.Employees(), (b, q) =>
      b.select('id', 'basePay').orderBy(q.basePay.desc()),
    );
    expect(ids(byPay.entities)).toEqual([7, 6, 5, 4, 3, 2, 1].map(employee).concat(EVA));
    expect(byPay.pages).toBe(3);
    expect(byPay.entities[0]).toEqual({ id: employee(7), basePay: 107000.5 });
    const twoKeys = await readAll(service.Employees(), (b, q) =>
      b.select('id').orderBy(q.eligibilityStatus.desc(), q.basePay.asc()),
    );
    expect(ids(twoKeys.entities)).toEqual([employee(4), EVA, ...[1, 2, 3, 5, 6, 7].map(employee)]);
    const byName = await readAll(service.Employees(), (b, q) =>
      b.select('id').orderBy(q.lastName.asc(), q.id.desc()),
    );
    // By code point: Å after Z.
    expect(ids(byName.entities)).toEqual([EVA, ...[3, 7, 6, 1, 2, 4, 5].map(employee)]);
    const rates = await readAll(service.ExchangeRates(), (b, q) =>
      b.select('currency').orderBy(q.rate.desc()),
    );
    expect(rates.entities.map((rate) => rate.currency)).toEqual(['JPY', 'USD', 'EUR', 'GBP']);

    const window = await readAll(service.Employees(), (b, q) =>
      b.select('id').orderBy(q.basePay.desc()).skip(1).top(4).count(),
    );
    expect(ids(window.entities)).toEqual([6, 5, 4, 3].map(employee));
    expect(window.pages).toBe(2);
    expect(window.count).toBe(8);
    const counted = await service
      .Employees()
      .query((b, q) => b.select('id').filter(q.remote.isTrue()).top(1).count());
    expect(counted.data['@odata.count']).toBe(4);
    // The set's own order: lastName, firstName, id.
    expect(counted.data.value).toEqual([{ id: employee(3) }]);
    const cycles = await service
      .MeritCycles()
      .query((b, q) => b.select('id', 'currency').filter(q.currency.eq('USD')).count());
    expect(cycles.data.value).toEqual([{ id: FEED_CYCLE.usd, currency: 'USD' }]);
    expect(cycles.data['@odata.count']).toBe(1);
    // As sent: options percent-encoded whole, `$` included (%24select=…).
    expect(client.urls.at(-1)).toBe(
      `${server.url}${FEED}/MeritCycles?%24select=id%2Ccurrency&%24filter=currency%20eq%20'USD'&%24count=true`,
    );
  });

  it('reads decimals and counts as exact strings when generated with v4BigNumberAsString (IEEE754Compatible=true)', async () => {
    const one = await exact.Employees(employee(1)).query((b) => b.select('id', 'basePay'));
    expect(one.headers['content-type']).toContain(';IEEE754Compatible=true;');
    expect(one.data).toEqual({
      '@odata.context': `${server.url}${FEED}/$metadata#Employees(id,basePay)/$entity`,
      id: employee(1),
      basePay: '101000.50',
    });
    const paid = await exact
      .Employees()
      .query((b, q) =>
        b
          .select('id', 'basePay')
          .filter(q.basePay.gt('105000.50'))
          .orderBy(q.basePay.desc())
          .count(),
      );
    expect(paid.data.value).toEqual([
      { id: employee(7), basePay: '107000.50' },
      { id: employee(6), basePay: '106000.50' },
    ]);
    // An Edm.Int64: a string too, whatever the generated type says.
    expect(paid.data['@odata.count']).toBe('2');
    const rates = await exact.ExchangeRates().query((b) => b.select('rate'));
    expect(rates.data.value).toEqual([
      { rate: '0.92' },
      { rate: '0.79' },
      { rate: '151.3' },
      { rate: '1.09' },
    ]);
  });

  it('is refused, as $metadata declares, what the generated service offers and the feed does not serve', async () => {
    // ExpandRestrictions Expandable false, SearchRestrictions Searchable false, no
    // aggregation ($apply, the builder's groupBy), IndexableByKey false on ExchangeRates:
    // 501; Insert/Update/DeleteRestrictions false: 405.
    await expect(service.MeritCycles().query((b) => b.expand('Employees'))).rejects.toMatchObject({
      status: 501,
    });
    await expect(service.Employees().query((b) => b.search('Ada'))).rejects.toMatchObject({
      status: 501,
    });
    await expect(service.Employees().query((b) => b.groupBy('department'))).rejects.toMatchObject({
      status: 501,
    });
    await expect(
      service.ExchangeRates({ meritCycleId: FEED_CYCLE.eur, currency: 'USD' }).query(),
    ).rejects.toMatchObject({ status: 501 });
    await expect(service.Employees(employee(1)).patch({ lastName: 'X' })).rejects.toMatchObject({
      status: 405,
    });
    await expect(service.Employees(employee(1)).delete()).rejects.toMatchObject({ status: 405 });
  });
});
