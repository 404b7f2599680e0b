// Settings → Data takes an Excel workbook where it takes a CSV file of one cycle's
// employees (docs/web-app.md, "Uploading a file"): told by its content, its first visible
// sheet or the one the form's `sheet` field names read with its typed cells, through the
// same engine as `compplan import FILE.xlsx`; a workbook that cannot be read is refused in
// plain words. Nothing of it is written outside the import's staging area. Real HTTP, both
// dialects.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  csrfTokenOf,
  signedInClient,
  staffedDataSet,
  textOf,
  type WebClient,
} from '../helpers/web-client.js';

const DATA = '/app/settings/data';
const HEADER = ['email', 'firstName', 'lastName', 'currencyCode', 'eligibilityStatus'];

// The staging area is made under the temporary directory: this file's own, to look into.
const temporary = mkdtempSync(join(tmpdir(), 'compplan-upload-xlsx-test-'));
const previousTmpdir = process.env.TMPDIR;
process.env.TMPDIR = temporary;

async function workbook(sheets: { name: string; rows: unknown[][]; hidden?: boolean }[]) {
  const book = new ExcelJS.Workbook();
  for (const { name, rows, hidden } of sheets) {
    const sheet = book.addWorksheet(name, hidden ? { state: 'hidden' } : {});
    for (const cells of rows) sheet.addRow(cells);
  }
  return new Uint8Array(await book.xlsx.writeBuffer());
}

describe('Settings → Data: an Excel workbook', () => {
  let server: TestServer;
  let owner: WebClient;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [staffedDataSet('initech', ['a@initech.example', 'b@initech.example'])],
    });
    owner = (await signedInClient(server, 'owner@initech.example', 'owner', 'initech')).client;
  });
  afterAll(async () => {
    await server.close();
    rmSync(temporary, { recursive: true, force: true });
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
  });

  const cycleId = async () => {
    const { rows } = await sql<{ id: string }>`select c.id from merit_cycles c
      join organizations o on o.id = c.organization_id where o.slug = 'initech'`.execute(
      server.database.db,
    );
    return rows[0]?.id ?? '';
  };
  const lastNames = async () => {
    const { rows } = await sql<{ email: string; last_name: string }>`select e.email, e.last_name
      from merit_cycle_employees e order by e.email`.execute(server.database.db);
    return Object.fromEntries(rows.map((row) => [row.email, row.last_name]));
  };
  async function check(content: Uint8Array, fields: Record<string, string>) {
    const _csrf = await owner.csrfToken(DATA);
    return owner.upload(
      `${DATA}/check`,
      { _csrf, format: 'csv', cycle: await cycleId(), ...fields },
      { name: 'employees.xlsx', content },
    );
  }

  it('the sheet the form names is checked and imported; nothing is written outside the staging area', async () => {
    const book = await workbook([
      { name: 'Hidden', rows: [['x']], hidden: true },
      { name: 'First', rows: [HEADER, ['a@initech.example', 'A', 'First', 'USD', 'eligible']] },
      { name: 'Second', rows: [HEADER, ['a@initech.example', 'A', 'Second', 'usd', 'Eligible']] },
    ]);
    const checked = await check(book, { sheet: 'Second' });
    expect(checked.status).toBe(303);
    // Only the staging area and the test database: the workbook reader made no file of its own.
    expect(readdirSync(temporary).filter((name) => !name.startsWith('compplan-'))).toEqual([]);
    const page = await owner.get(checked.location ?? '');
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const _csrf = csrfTokenOf(page.body);
    const imported = await owner.post(`${DATA}/import`, { _csrf, token });
    expect(imported.status).toBe(303);
    expect((await lastNames())['a@initech.example']).toBe('Second');
  });

  it('a workbook protected with a password is refused in plain words; nothing changes', async () => {
    const before = await lastNames();
    const encrypted = new Uint8Array(2048);
    encrypted.set(Buffer.from('d0cf11e0a1b11ae1', 'hex'));
    encrypted.set(Buffer.from('EncryptedPackage', 'utf16le'), 1024);
    const refused = await check(encrypted, {});
    expect(refused.status).toBe(422);
    expect(textOf(refused.body)).toContain(
      'the workbook is protected with a password, so it cannot be read. Open it in Excel, remove the password',
    );
    expect(await lastNames()).toEqual(before);
  });
});
