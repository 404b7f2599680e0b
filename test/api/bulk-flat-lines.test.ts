// The flat CSV's lines made at import (docs/bulk-download.md, "Lines made at import";
// src/export/flat-line.ts): the import stores each employee's line beside its JSON text,
// keyed by the layout it was written against; a download sends the line as stored when
// the key matches its own layout and converts the JSON text otherwise. Whichever way each
// employee goes, the bytes are the same: every download here is compared, byte for byte,
// with the same download once no stored line is left to send. Employees whose names CSV
// must quote (commas, quotes, line breaks, leading spaces) end every chunk, so the next
// chunk is read on from a stored line's fields; a chunk of lines alone is joined as it is.
// A name with U+001E keeps no line; a column some employees lack, a column another cycle
// also names (bonus_pct_2), a key hiding a column, a sliced key and a later import that
// widens the cycle's columns each send some employees converted. Runs on every database.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { ANALYST_CYCLE, ANALYST_ORG, analystDataSet } from '../fixtures/analyst-data-set.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// More than one chunk of the download (200 employees, then up to 2,000).
const EMPLOYEES = 2_300;

const LINES_ORG = 'lineco';
const LINES_CYCLE = 'mc_62000000-0000-4000-8000-000000000001';
// Every last name is one CSV quotes, so every chunk ends on one.
const LAST_NAMES = ['Smith, Jr.', 'O"Hara', 'Line\r\nBreak', ' Leading', 'Tab\tEnd '];
// A name with the download's text separator in it: no stored line (converted each time).
// Only among the first thousand: the list's last chunk (the highest of the last name's
// numbers) is then stored lines alone, joined without the conversion thread.
const SEPARATOR_NAME = 'Rec\u001eord';
const hasSeparatorName = (i: number) => i % 97 === 0 && i < 1_000;

function linesDataSet(employees: number, level = (i: number) => `L${i % 5}`): DataSetInput {
  return {
    organization: { slug: LINES_ORG, name: 'Line Co', apiKeysEnabled: true },
    meritCycles: [
      {
        id: LINES_CYCLE,
        name: 'Lines',
        status: 'active',
        startDate: '2026-01-01T00:00:00.000Z',
        endDate: '2026-03-31T00:00:00.000Z',
        createdDate: '2025-12-01T00:00:00.000Z',
        currency: 'EUR',
        employees: Array.from({ length: employees }, (_, i) => ({
          id: `mce_62000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          email: `line${i}@line.example`,
          firstName: hasSeparatorName(i) ? SEPARATOR_NAME : `First, "${i % 3}"`,
          lastName: `${LAST_NAMES[i % LAST_NAMES.length]} ${String(i).padStart(4, '0')}`,
          preferredName: i % 2 ? null : `=cmd|' ${i}`,
          currencyCode: 'EUR',
          eligibilityStatus: 'eligible' as const,
          columns: {
            pay: { name: 'Pay', type: 'currency', value: { EUR: `-000${i}.50` } },
            team: { name: 'Team', type: 'text', value: i % 4 === 0 ? 'Ops' : 'Build' },
            role: { name: 'Role', type: 'composite', value: { level: level(i), title: 'Ünïcode' } },
          },
        })),
      },
    ],
  };
}

const bulkCsv = (cycle: string) => `${employeesPath(cycle)}/bulk?format=csv`;

describe('the flat CSV’s lines made at import', () => {
  let server: TestServer;
  let analyst: string;
  let lines: string;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [analystDataSet(EMPLOYEES), linesDataSet(EMPLOYEES)],
    });
    analyst = await server.createKey(ANALYST_ORG);
    lines = await server.createKey(LINES_ORG);
  }, 120_000);
  afterAll(() => server?.close());

  const download = async (key: string, cycle: string) => {
    const response = await server.request(bulkCsv(cycle), { key });
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  };

  /** The stored lines' keys of a cycle's employees: how many employees hold each. */
  const keysOf = async (cycle: string) => {
    const { rows } = await sql<{ flat_key: string | null; count: number | string }>`
      select flat_key, count(*) as count from merit_cycle_employees
       where merit_cycle_id = ${cycle} group by flat_key`.execute(server.database.db);
    return new Map(rows.map((row) => [row.flat_key, Number(row.count)]));
  };

  /** Runs `read` once with the stored lines as they are, once with none left to send. */
  async function withAndWithoutLines<T>(read: () => Promise<T>): Promise<[T, T]> {
    const db = server.database.db;
    const withLines = await read();
    // A key no layout has, then the key again.
    for (const table of [sql`merit_cycle_employees`, sql`row_slice_members`]) {
      await sql`update ${table} set flat_key = 'off:' || flat_key`.execute(db);
    }
    try {
      return [withLines, await read()];
    } finally {
      for (const table of [sql`merit_cycle_employees`, sql`row_slice_members`]) {
        await sql`update ${table} set flat_key = substr(flat_key, 5)`.execute(db);
      }
    }
  }

  it('stores a line for each employee, keyed by its own columns; none for a name with U+001E', async () => {
    const analystKeys = await keysOf(ANALYST_CYCLE.pay);
    // Every third employee has no bonus column: two layouts, both with lines.
    expect(analystKeys.get(null)).toBeUndefined();
    expect([...analystKeys.values()].sort((a, b) => a - b)).toEqual([
      Math.ceil(EMPLOYEES / 3),
      EMPLOYEES - Math.ceil(EMPLOYEES / 3),
    ]);
    const lineKeys = await keysOf(LINES_CYCLE);
    expect(lineKeys.get(null)).toBe(
      Array.from({ length: EMPLOYEES }, (_, i) => i).filter(hasSeparatorName).length,
    );
    expect(lineKeys.size).toBe(2);
    const { rows } = await sql<{ flat_line: string }>`
      select flat_line from merit_cycle_employees
       where id = ${'mce_62000000-0000-4000-8000-000000000001'}`.execute(server.database.db);
    expect(rows[0]?.flat_line).toBe(
      `mce_62000000-0000-4000-8000-000000000001,${LINES_CYCLE},line1@line.example,"First, ""1""","O""Hara 0001",,EUR,Euro,eligible,EUR,-0001.50,L1,Ünïcode,Build\r\n`,
    );
  });

  it('sends an employee’s stored line as it is stored', async () => {
    const db = server.database.db;
    const id = 'mce_62000000-0000-4000-8000-000000000001';
    const { rows } = await sql<{ flat_line: string }>`
      select flat_line from merit_cycle_employees where id = ${id}`.execute(db);
    const stored = rows[0]?.flat_line as string;
    const marked = stored.replace('Build', 'Stored line');
    await sql`update merit_cycle_employees set flat_line = ${marked} where id = ${id}`.execute(db);
    try {
      const csv = (await download(lines, LINES_CYCLE)).toString('utf8');
      expect(csv).toContain(marked);
      expect(csv).not.toContain(stored);
    } finally {
      await sql`update merit_cycle_employees set flat_line = ${stored} where id = ${id}`.execute(
        db,
      );
    }
  });

  it('sends the same bytes as converting every employee: quoted names at every chunk’s end, lines and conversions mixed, a renamed column', async () => {
    for (const [key, cycle] of [
      [lines, LINES_CYCLE],
      [analyst, ANALYST_CYCLE.pay],
    ] as const) {
      const [stored, converted] = await withAndWithoutLines(() => download(key, cycle));
      expect(stored.equals(converted)).toBe(true);
      // The header and every employee: a CSV line break inside quotes is not a row's end.
      expect(stored.toString('utf8').split('\r\n').length).toBeGreaterThan(EMPLOYEES);
    }
  });

  it('converts for a key hiding a column: the hidden column’s values, which the stored lines hold, are not sent', async () => {
    const hiding = await server.createKey(LINES_ORG, 'no pay', { hiddenColumns: ['pay'] });
    const [stored, converted] = await withAndWithoutLines(() => download(hiding, LINES_CYCLE));
    expect(stored.equals(converted)).toBe(true);
    const text = stored.toString('utf8');
    expect(text.split('\r\n')[0]).not.toContain('pay');
    expect(text).not.toContain('-0001.50');
  });

  it('sends a sliced key’s members’ lines: only the slice’s employees, the same bytes', async () => {
    const ops = await server.createKey(LINES_ORG, 'ops', { rows: 'team = Ops' });
    const [stored, converted] = await withAndWithoutLines(() => download(ops, LINES_CYCLE));
    expect(stored.equals(converted)).toBe(true);
    const text = stored.toString('utf8');
    expect(text).toContain(',Ops\r\n');
    expect(text).not.toContain(',Build\r\n');
  });

  // A part that is `L…` text for most and a number for a few.
  const widened = (i: number) => (i % 10 === 3 ? '7' : `L${i % 5}`);

  it('converts the employees an import left unchanged once it widens the cycle’s columns', async () => {
    // The cycle's part becomes text, and the kept lines, written when it was text for all,
    // still match; a new part type for the changed employees gives them a layout of their
    // own.
    await server.load(linesDataSet(EMPLOYEES, widened));
    const keys = await keysOf(LINES_CYCLE);
    expect(keys.size).toBe(3);
    const [stored, converted] = await withAndWithoutLines(() => download(lines, LINES_CYCLE));
    expect(stored.equals(converted)).toBe(true);
    expect(stored.toString('utf8')).toContain(',7,Ünïcode,');
  });

  it('gives the employees an import leaves unchanged the file’s lines in place: no change, the same ETag, an empty delta', async () => {
    const db = server.database.db;
    const ops = await server.createKey(LINES_ORG, 'ops again', { rows: 'team = Ops' });
    const keysBefore = await keysOf(LINES_CYCLE);
    const [stored] = await withAndWithoutLines(() => download(ops, LINES_CYCLE));
    const tagOf = async () =>
      (await server.request(bulkCsv(LINES_CYCLE), { key: ops, method: 'HEAD' })).headers.get(
        'etag',
      );
    const etag = await tagOf();
    // A full sync walked to its last page, which holds the token of what changes next.
    let deltaToken: string | null = null;
    for (let cursor: string | null = null; deltaToken === null; ) {
      const query = cursor ? `?nextCursor=${encodeURIComponent(cursor)}` : '';
      const page = (await (
        await server.request(`${employeesPath(LINES_CYCLE)}/delta${query}`, { key: ops })
      ).json()) as { nextCursor: string | null; deltaToken: string | null };
      ({ nextCursor: cursor, deltaToken } = page);
    }
    // As if stored before lines were kept.
    for (const table of [sql`merit_cycle_employees`, sql`row_slice_members`]) {
      await sql`update ${table} set flat_key = null, flat_line = null`.execute(db);
    }
    const summary = await server.load(linesDataSet(EMPLOYEES, widened));
    expect(summary.employees).toEqual({ created: 0, updated: 0, unchanged: EMPLOYEES, removed: 0 });
    expect(await keysOf(LINES_CYCLE)).toEqual(keysBefore);
    const { rows } = await sql<{ count: number | string }>`
      select count(*) as count from row_slice_members m join merit_cycle_employees e on e.id = m.id
       where m.flat_key is not distinct from e.flat_key and m.flat_line is not distinct from e.flat_line
         and m.merit_cycle_id = ${LINES_CYCLE}`.execute(db);
    expect(Number(rows[0]?.count)).toBeGreaterThan(EMPLOYEES / 5);
    expect((await download(ops, LINES_CYCLE)).equals(stored)).toBe(true);
    expect(await tagOf()).toBe(etag);
    const next = await server.request(
      `${employeesPath(LINES_CYCLE)}/delta?deltaToken=${encodeURIComponent(deltaToken ?? '')}`,
      { key: ops },
    );
    expect(((await next.json()) as { data: unknown[] }).data).toEqual([]);
  });
});
