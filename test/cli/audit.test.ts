// compplan keys create --allow-ips, keys list and roll with an allowlist, and compplan
// audit list|export, against a real `compplan serve` on the same database (SQLite).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import {
  runCli,
  startCliServer,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';
import { importDataSet } from '../helpers/set-up.js';

interface ListedKey {
  id: string;
  name: string;
  allowedAddresses: string[] | null;
}
interface Entry {
  action: string;
  path: string | null;
  employees: number | null;
  columnsServed: string[] | null;
  actor: string | null;
  keyId: string | null;
  status: number | null;
  clientAddress: string | null;
  userAgent: string | null;
}

// A user agent a spreadsheet would run as a formula, were it not escaped.
const FORMULA_AGENT = '=HYPERLINK("http://attacker.example","click")';

describe('compplan keys --allow-ips and compplan audit', () => {
  let db: TempDatabase;
  let bound: { id: string; key: string };
  let open: { id: string; key: string };
  const cli = (args: string[]) => runCli(args, { env: db.env });
  const listed = async () =>
    JSON.parse((await cli(['keys', 'list', '--org', ACME, '--json'])).stdout) as ListedKey[];

  beforeAll(async () => {
    db = tempDatabase();
    await importDataSet(db.url, acmeDataSet());
  });
  afterAll(async () => {
    await stopAllProcesses();
    db?.remove();
  });

  it('keys create --allow-ips binds the key; keys list shows the ranges; keys roll keeps them', async () => {
    const created = await cli([
      'keys',
      'create',
      '--org',
      ACME,
      '--name',
      'office',
      '--allow-ips',
      '127.0.0.2/32, 2001:db8::/32',
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('It may be used only from 127.0.0.2/32, 2001:db8::/32.');
    bound = {
      id: /Created API key (key_\S+)/.exec(created.stdout)?.[1] ?? '',
      key: /^\s+(cpk_\S+)$/m.exec(created.stdout)?.[1] ?? '',
    };
    open = JSON.parse(
      (await cli(['keys', 'create', '--org', ACME, '--name', 'anywhere', '--json'])).stdout,
    ) as { id: string; key: string };
    expect((await listed()).map((key) => [key.name, key.allowedAddresses])).toEqual([
      ['office', ['127.0.0.2/32', '2001:db8::/32']],
      ['anywhere', null],
    ]);
    const table = (await cli(['keys', 'list', '--org', ACME])).stdout;
    expect(table).toContain('ALLOWED IPS');
    expect(table).toContain('127.0.0.2/32,2001:db8::/32');
    expect((await cli(['keys', 'roll', bound.id, '--grace', '0s'])).code).toBe(0);
    expect((await listed()).find((key) => key.id === bound.id)?.allowedAddresses).toEqual([
      '127.0.0.2/32',
      '2001:db8::/32',
    ]);
    bound.key = ''; // rolled: the old secret stopped at once
  });

  it('keys create with a malformed range: one clear line, exit 1, no key created', async () => {
    const before = await listed();
    const refused = await cli(['keys', 'create', '--org', ACME, '--allow-ips', '10.0.0/8']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'compplan: --allow-ips: "10.0.0/8" is not an IP address or CIDR range, such as 203.0.113.0/24, 198.51.100.7 or 2001:db8::/32\n',
    );
    expect(await listed()).toEqual(before);
  });

  it('audit list shows the requests (the 403 from outside an allowlist too) and the actions; --key, --since and --json filter and shape it', async () => {
    const rolled = JSON.parse(
      (await cli(['keys', 'roll', bound.id, '--grace', '0s', '--json'])).stdout,
    ) as { key: string };
    const server = await startCliServer([], { ...db.env, LOG_LEVEL: 'warn' });
    const get = (key: string) =>
      fetch(`${server.url}/ping`, { headers: { 'x-api-key': key, 'user-agent': FORMULA_AGENT } });
    expect((await get(rolled.key)).status).toBe(403);
    expect((await get(open.key)).status).toBe(200);
    expect((await server.stop()).code).toBe(0);

    const all = JSON.parse(
      (await cli(['audit', 'list', '--org', ACME, '--json'])).stdout,
    ) as Entry[];
    expect(
      all.slice(0, 2).map((entry) => [entry.status, entry.keyId, entry.clientAddress]),
    ).toEqual([
      [200, open.id, '127.0.0.1'],
      [403, bound.id, '127.0.0.1'],
    ]);
    expect(all.map((entry) => entry.action)).toEqual([
      'api.request',
      'api.request',
      'key.rolled',
      'key.rolled',
      'key.created',
      'key.created',
      'import',
    ]);
    expect(
      all.filter((entry) => entry.action !== 'api.request').every((e) => e.actor === 'cli'),
    ).toBe(true);
    const ofKey = JSON.parse(
      (await cli(['audit', 'list', '--org', ACME, '--key', bound.id, '--json'])).stdout,
    ) as Entry[];
    expect(ofKey.map((entry) => entry.action)).toEqual([
      'api.request',
      'key.rolled',
      'key.rolled',
      'key.created',
    ]);
    const text = (await cli(['audit', 'list', '--org', ACME])).stdout;
    expect(text).toContain('GET /ping → 403, 0 employees');
    expect((await cli(['audit', 'list', '--org', ACME, '--since', '2999-01-01'])).stdout).toBe(
      `No audit log entries for ${ACME}.\n`,
    );
  });

  it('audit list refuses a bad --since, an unknown organisation and a bad --limit with one line and exit 1', async () => {
    const badSince = await cli(['audit', 'list', '--org', ACME, '--since', 'yesterday']);
    expect([badSince.code, badSince.stderr]).toEqual([
      1,
      'compplan: --since must be a date (YYYY-MM-DD, UTC) or an ISO 8601 time with its offset; got "yesterday"\n',
    ]);
    const unknown = await cli(['audit', 'list', '--org', 'nope']);
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      'compplan: No organisation with slug "nope"\n',
    ]);
    const badLimit = await cli(['audit', 'list', '--org', ACME, '--limit', '0']);
    expect([badLimit.code, badLimit.stderr]).toEqual([
      1,
      'compplan: --limit must be a whole number from 1 to 10000\n',
    ]);
  });

  it('audit export writes CSV, newest first, with a cell that would run as a formula written as text', async () => {
    const out = join(db.dir, 'audit.csv');
    const exported = await cli(['audit', 'export', '--org', ACME, '-o', out]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe(`Wrote 7 audit log entries of ${ACME} to ${out}.\n`);
    const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(7);
    expect(rows[0]).toMatchObject({ action: 'api.request', status: '200', path: '/ping' });
    expect(rows[0]?.userAgent).toBe(`'${FORMULA_AGENT}`);
    expect(rows[6]?.action).toBe('import');
    expect(JSON.parse(rows[6]?.details ?? '')).toMatchObject({ organizationCreated: true });
    const since = await cli(['audit', 'export', '--org', ACME, '--since', '2999-01-01', '-o', out]);
    expect(since.stderr).toBe(`Wrote 0 audit log entries of ${ACME} to ${out}.\n`);
  });
  it('audit list --column and export --column: the requests whose answer carried that column key (case-sensitive), listed with their columns', async () => {
    const server = await startCliServer([], { ...db.env, LOG_LEVEL: 'warn' });
    const path = `/v1/compensationPlanning/meritCycles/${CYCLE.annual2025}/employees`;
    const headers = { 'x-api-key': open.key };
    expect((await fetch(`${server.url}${path}?limit=2`, { headers })).status).toBe(200);
    expect((await fetch(`${server.url}/ping`, { headers })).status).toBe(200);
    expect((await server.stop()).code).toBe(0);
    const annual = acmeDataSet().meritCycles.find((cycle) => cycle.id === CYCLE.annual2025);
    const columns = [
      ...new Set(annual?.employees?.flatMap((e) => Object.keys(e.columns as object))),
    ].sort();

    const today = new Date().toISOString().slice(0, 10);
    const args = ['audit', 'list', '--org', ACME, '--column', 'department', '--since', today];
    const read = JSON.parse((await cli([...args, '--json'])).stdout) as Entry[];
    expect(read.map((entry) => [entry.path, entry.employees, entry.columnsServed])).toEqual([
      [path, 2, columns],
    ]);
    expect((await cli(args)).stdout).toContain(
      `GET ${path} → 200, 2 employees (${columns.join(', ')})`,
    );
    expect((await cli(['audit', 'list', '--org', ACME, '--column', 'Department'])).stdout).toBe(
      `No audit log entries for ${ACME}.\n`,
    );

    const out = join(db.dir, 'department.csv');
    const exported = await cli([
      'audit',
      'export',
      '--org',
      ACME,
      '--column',
      'department',
      '-o',
      out,
    ]);
    expect(exported.stderr).toBe(`Wrote 1 audit log entries of ${ACME} to ${out}.\n`);
    const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => [row.path, row.employees, row.columnsServed])).toEqual([
      [path, '2', JSON.stringify(columns)],
    ]);
  });
});
