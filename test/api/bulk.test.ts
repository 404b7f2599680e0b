// GET …/meritCycles/{meritCycleId}/employees/bulk over real HTTP (docs/bulk-download.md):
// NDJSON is exactly the list's employees, byte for byte and in its order, across chunk
// boundaries; CSV with shape=nested is the export's layout (the flat shape: bulk-flat.test.ts); the ETag follows the employees and answers 304;
// gzip; HEAD; hidden columns, cycle scopes, other organisations and bad queries. Runs on
// every database.
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EDGE_CYCLE,
  edgeEmployees,
  PROTO_CYCLE,
  UMBRELLA,
  umbrellaDataSet,
} from '../fixtures/api-data-sets.js';
import {
  QUOTED_CYCLE,
  QUOTED_EMPLOYEES,
  QUOTED_LAST_NAMES,
  QUOTED_ORG,
  quotedNamesDataSet,
} from '../fixtures/bulk-data-sets.js';
import {
  ACME,
  acmeDataSet,
  CYCLE,
  globexDataSet,
  LARGE_CYCLE,
  largeCycleDataSet,
} from '../fixtures/data-sets.js';
import {
  compareEmployees,
  employeesPath,
  errorBody,
  expectedEmployee,
  rawRequest,
} from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const bulkPath = (cycle: string, query = '') => `${employeesPath(cycle)}/bulk${query}`;
// More than one chunk of the download (2,000 employees a statement).
const LARGE = 4_500;
const HIDDEN = ['__proto__', 'quoting', 'department'];

/** The list's `data` texts, page by page: what each NDJSON line must be, in order. */
async function listTexts(server: TestServer, key: string, cycle: string): Promise<string[]> {
  const texts: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : '';
    const response = await fetch(`${server.url}${employeesPath(cycle)}?limit=100${query}`, {
      headers: { 'x-api-key': key },
    });
    if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
    const page = (await response.json()) as { data: unknown[]; nextCursor: string | null };
    texts.push(...page.data.map((employee) => JSON.stringify(employee)));
    cursor = page.nextCursor;
  } while (cursor);
  return texts;
}

describe('GET /meritCycles/{meritCycleId}/employees/bulk', () => {
  let server: TestServer;
  let acme: string;
  let umbrella: string;
  let hiding: string;
  let scoped: string;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [
        acmeDataSet(),
        globexDataSet(),
        umbrellaDataSet(),
        largeCycleDataSet(LARGE),
        quotedNamesDataSet(),
      ],
    });
    acme = await server.createKey(ACME);
    umbrella = await server.createKey(UMBRELLA);
    hiding = await server.createKey(UMBRELLA, 'no pay', { hiddenColumns: HIDDEN });
    scoped = await server.createKey(ACME, 'one cycle', { cycles: [CYCLE.midYear] });
  }, 120_000);
  afterAll(() => server?.close());

  const get = (path: string, key: string, headers: Record<string, string> = {}) =>
    server.request(path, { key, headers });

  it('serves every employee as NDJSON: each line the text the list serves, in list order, across chunks', async () => {
    const response = await get(bulkPath(LARGE_CYCLE), acme);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(response.headers.get('content-length')).toBeNull();
    const body = await response.text();
    expect(body.endsWith('\n')).toBe(true);
    const lines = body.slice(0, -1).split('\n');
    expect(lines).toHaveLength(LARGE);
    expect(lines).toEqual(await listTexts(server, acme, LARGE_CYCLE));
  });

  it('reads on across chunks from employees whose names hold quotes, backslashes, $1 and $$ (written into PostgreSQL’s COPY)', async () => {
    const quoted = await server.createKey(QUOTED_ORG);
    const ndjson = await (await get(bulkPath(QUOTED_CYCLE), quoted)).text();
    const lines = ndjson.trimEnd().split('\n');
    expect(lines).toHaveLength(QUOTED_EMPLOYEES);
    expect(lines).toEqual(await listTexts(server, quoted, QUOTED_CYCLE));
    // Each chunk (200, then 2,000 employees) ends on such a name.
    for (const at of [199, 2_199]) {
      const { lastName } = JSON.parse(lines[at] ?? '{}') as { lastName: string };
      expect(QUOTED_LAST_NAMES.some((name) => lastName.startsWith(name))).toBe(true);
    }
    const csv = parse(await (await get(bulkPath(QUOTED_CYCLE, '?format=csv'), quoted)).text(), {
      bom: true,
      columns: true,
    }) as { id: string; lastName: string }[];
    expect(csv.map((row) => [row.id, row.lastName])).toEqual(
      lines.map((line) => {
        const { id, lastName } = JSON.parse(line) as { id: string; lastName: string };
        return [id, lastName];
      }),
    );
  });

  it('serves the edge employees (any column key and value) exactly as loaded, format=ndjson named', async () => {
    const response = await get(bulkPath(EDGE_CYCLE, '?format=ndjson'), umbrella);
    const lines = (await response.text()).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(
      edgeEmployees().map(expectedEmployee).sort(compareEmployees),
    );
    expect(lines).toEqual(await listTexts(server, umbrella, EDGE_CYCLE));
  });

  it('serves an empty line-less body for a cycle without employees', async () => {
    const response = await get(bulkPath(CYCLE.lastYear), acme);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('serves CSV in the export layout with shape=nested: BOM, header from the columns, one row per employee in list order', async () => {
    const response = await get(bulkPath(EDGE_CYCLE, '?format=csv&shape=nested'), umbrella);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8').slice(1);
    expect(text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parse(text, { relax_column_count: false }) as string[][];
    const employees = (await listTexts(server, umbrella, EDGE_CYCLE)).map(
      (line) => JSON.parse(line) as { id: string; columns: Record<string, { value: unknown }> },
    );
    expect(header?.slice(0, 8)).toEqual([
      'id',
      'email',
      'firstName',
      'lastName',
      'preferredName',
      'currencyCode.code',
      'currencyCode.value',
      'eligibilityStatus',
    ]);
    expect(header?.at(-1)).toBe('columns.other');
    const columnNames = header?.slice(8, -1) ?? [];
    expect(columnNames).toEqual([...columnNames].sort());
    // Every column of every employee has a place in the header: columns.other is empty.
    for (const key of new Set(employees.flatMap((e) => Object.keys(e.columns)))) {
      expect(
        columnNames.some((name) => name === `columns.${key}` || name.startsWith(`columns.${key}.`)),
      ).toBe(true);
    }
    expect(rows.map((row) => row[0])).toEqual(employees.map((e) => e.id));
    expect(rows.every((row) => row.at(-1) === '')).toBe(true);
  });

  it('leaves out the byte order mark with bom=false', async () => {
    const response = await get(
      bulkPath(CYCLE.annual2025, '?format=csv&shape=nested&bom=false'),
      acme,
    );
    const text = await response.text();
    expect(text.startsWith('id,email,firstName,lastName,preferredName,')).toBe(true);
    expect(text.split('\r\n')[0]).toBe(
      'id,email,firstName,lastName,preferredName,currencyCode.code,currencyCode.value,eligibilityStatus,columns.department,columns.employee.fullName,columns.employee.jobLevel,columns.employee.jobTitle,columns.notes,columns.tags,columns.tenure,columns.other',
    );
  });

  it('tags the snapshot: the same ETag while the employees stay, 304 without a body for it, a new one once they change', async () => {
    const first = await get(bulkPath(CYCLE.annual2025), acme);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"[\w-]{22}"$/);
    await first.text();
    const again = await get(bulkPath(CYCLE.annual2025), acme, { 'if-none-match': etag ?? '' });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    // Another form of the same employees is another body.
    const csv = await get(bulkPath(CYCLE.annual2025, '?format=csv'), acme);
    expect(csv.headers.get('etag')).not.toBe(etag);
    await csv.text();
    // An import that changes nothing keeps the tag; one that changes an employee does not.
    await server.load(acmeDataSet());
    const unchanged = await get(bulkPath(CYCLE.annual2025), acme, { 'if-none-match': etag ?? '' });
    expect(unchanged.status).toBe(304);
    const changed = acmeDataSet();
    const annual = changed.meritCycles.find((cycle) => cycle.id === CYCLE.annual2025);
    const someone = annual?.employees?.[0];
    if (!someone) throw new Error('fixture lost its employees');
    someone.firstName = `${someone.firstName} Renamed`;
    await server.load(changed);
    const after = await get(bulkPath(CYCLE.annual2025), acme, { 'if-none-match': etag ?? '' });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(await after.text()).toContain('Renamed');
    await server.load(acmeDataSet());
  });

  it('is gzip-encoded when the client accepts it, and decodes to the same bytes', async () => {
    const plain = await rawRequest(server.url, bulkPath(LARGE_CYCLE), {
      headers: { 'x-api-key': acme },
    });
    const gzipped = await rawRequest(server.url, bulkPath(LARGE_CYCLE), {
      headers: { 'x-api-key': acme, 'accept-encoding': 'gzip' },
    });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toContain('accept-encoding');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
    expect(gzipped.body.length).toBeLessThan(plain.body.length / 4);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const head = await server.request(bulkPath(CYCLE.annual2025), { key: acme, method: 'HEAD' });
    const get200 = await get(bulkPath(CYCLE.annual2025), acme);
    await get200.text();
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(get200.headers.get('etag'));
    expect(head.headers.get('content-type')).toBe(get200.headers.get('content-type'));
  });

  it('leaves out the columns a key hides, in NDJSON and in the CSV header', async () => {
    const full = (await listTexts(server, umbrella, EDGE_CYCLE)).map(
      (line) => JSON.parse(line) as { columns: Record<string, unknown> },
    );
    for (const employee of full) {
      for (const key of HIDDEN)
        if (Object.hasOwn(employee.columns, key)) delete employee.columns[key];
    }
    const ndjson = await (await get(bulkPath(EDGE_CYCLE), hiding)).text();
    expect(ndjson.trimEnd().split('\n')).toEqual(full.map((employee) => JSON.stringify(employee)));
    expect(ndjson.trimEnd().split('\n')).toEqual(await listTexts(server, hiding, EDGE_CYCLE));
    const proto = await (await get(bulkPath(PROTO_CYCLE), hiding)).text();
    expect(proto).not.toContain('"__proto__":{"name":"Proto"');
    const csv = await (
      await get(bulkPath(EDGE_CYCLE, '?format=csv&shape=nested&bom=false'), hiding)
    ).text();
    const header = csv.split('\r\n')[0] ?? '';
    for (const key of HIDDEN) expect(header.split(',')).not.toContain(`columns.${key}`);
    expect(header).not.toMatch(/columns\.department/);
    // The flat CSV names them as the feed does: `__proto__`, `quoting`, `department`.
    const flat = await (await get(bulkPath(EDGE_CYCLE, '?format=csv&bom=false'), hiding)).text();
    const flatHeader = (flat.split('\r\n')[0] ?? '').split(',');
    for (const key of HIDDEN) expect(flatHeader).not.toContain(key);
  });

  it('does not find a cycle outside the key’s cycle scope, of another organisation, or unknown', async () => {
    const scopedIn = await get(bulkPath(CYCLE.midYear), scoped);
    expect(scopedIn.status).toBe(200);
    await scopedIn.text();
    for (const [cycle, key] of [
      [CYCLE.annual2025, scoped],
      [CYCLE.globex, acme],
      ['mc_00000000-0000-4000-8000-000000000000', acme],
      ['not-a-cycle', acme],
    ] as const) {
      const response = await get(bulkPath(cycle), key);
      expect(response.status, cycle).toBe(404);
      expect(await response.json()).toEqual(
        errorBody(bulkPath(cycle), 'Merit cycle not found', 404),
      );
    }
  });

  it('refuses an unknown format, a bom other than true or false, and unknown parameters (422)', async () => {
    for (const query of ['?format=xlsx', '?bom=no', '?limit=10', '?format=csv&sort=name']) {
      const response = await get(bulkPath(CYCLE.annual2025, query), acme);
      expect(response.status, query).toBe(422);
      const body = (await response.json()) as { validationErrors: unknown[] };
      expect(body.validationErrors.length).toBeGreaterThan(0);
    }
  });

  it('asks for a key like every API route', async () => {
    const response = await server.request(bulkPath(CYCLE.annual2025), { key: null });
    expect(response.status).toBe(401);
  });
});
