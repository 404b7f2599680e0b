// Issue #45's "Done when", walked as a new user of Settings → Data would, with files an
// office suite wrote (test/fixtures/xlsx/make-xlsx.sh: LibreOffice): an HRIS export of 200
// employees as CSV — semicolons, Windows-1252, dates 03/15/2025, amounts 85,000, TRUE and
// FALSE, Eligible, a column the import does not know — is refused with the form's
// defaults, every problem at once in plain words, and loads with the right choices and no
// edit; the same export as an Excel workbook loads with its typed cells, nothing to
// choose. Both equal the same data loaded as JSON: checked into the cycle the JSON filled,
// each finds its 200 employees unchanged. A new cycle made on the page is filled from the
// workbook. Over real HTTP, on both databases.
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  csrfTokenOf,
  hiddenFieldsOf,
  signedInClient,
  textOf,
  type WebClient,
} from '../helpers/web-client.js';

const DATA = '/app/settings/data';
const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/xlsx/${name}`, import.meta.url));
const HRIS_JSON = fixture('hris.json');
const HRIS_CSV = fixture('hris.csv');
const HRIS_XLSX = fixture('hris.xlsx');
const JSON_CYCLE = 'mc_4e3c0b1a-7d2f-4c5e-9a1b-000000000003';
const CHOICES = {
  dates: 'MM/DD/YYYY',
  amounts: '1,234.56',
  encoding: 'windows-1252',
  ignoreUnknownColumns: 'on',
};

/** Words a person loading a spreadsheet should never be shown. */
const DEVELOPER_WORDS =
  /JSON|Invalid option|expected one of|decimal string|\bbyte 0x|validator|zod/;

describe('Settings → Data: the newcomer’s HRIS export', () => {
  let server: TestServer;
  let owner: WebClient;

  async function check(
    file: { name: string; content: Uint8Array },
    fields: Record<string, string>,
  ) {
    const _csrf = await owner.csrfToken(DATA);
    return owner.upload(`${DATA}/check`, { _csrf, ...fields }, file);
  }
  /** The check's page, then its Import sent; the page the import leads to. */
  async function importChecked(location: string) {
    const page = await owner.get(location);
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const imported = await owner.post(`${DATA}/import`, { _csrf: csrfTokenOf(page.body), token });
    expect(imported.status).toBe(303);
    return textOf((await owner.get(DATA)).body);
  }
  /** Each stored employee of a cycle, without its id and change stamps, by email. */
  const employeesOf = async (cycleId: string) => {
    const { rows } = await sql<{ email: string; body: string }>`
      select email, body from merit_cycle_employees where merit_cycle_id = ${cycleId}`.execute(
      server.database.db,
    );
    return Object.fromEntries(
      rows.map((row) => {
        const { id: _id, ...employee } = JSON.parse(row.body) as Record<string, unknown>;
        return [row.email, employee];
      }),
    );
  };

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [{ organization: { slug: 'newco', name: 'Newco' }, meritCycles: [] }],
    });
    owner = (await signedInClient(server, 'hr@newco.example', 'owner', 'newco')).client;
    // The export as JSON, loaded through the page as a data set: what the others must equal.
    const checked = await check({ name: 'hris.json', content: HRIS_JSON }, { format: 'data-set' });
    expect(checked.status).toBe(303);
    expect(await importChecked(checked.location ?? '')).toContain(
      'Imported hris.json: merit cycles 1 created, 0 updated, 0 unchanged; employees 200 created, 0 updated, 0 unchanged, 0 removed.',
    );
  });
  afterAll(async () => {
    await server.close();
  });

  it('the CSV file as LibreOffice wrote it, checked with the form’s defaults: refused with every problem at once, in plain words', async () => {
    const refused = await check(
      { name: 'hris.csv', content: HRIS_CSV },
      { format: 'csv', cycle: JSON_CYCLE },
    );
    expect(refused.status).toBe(422);
    const text = textOf(refused.body);
    expect(text).toContain('The file was not imported: it has 593 problems. Nothing was changed.');
    // What it read without a choice made: the separator, TRUE/FALSE, Eligible.
    expect(text).toContain(
      "Read as: separator ';', encoding UTF-8, dates YYYY-MM-DD, amounts 1234.56, booleans TRUE/FALSE, eligibilityStatus in any letter case.",
    );
    const headings = [...refused.body.matchAll(/<h3 id="problem-\d+">([\s\S]*?)<\/h3>/g)].map(
      ([, heading]) => textOf(heading ?? ''),
    );
    // The header, the encoding, the dates and the amounts: every problem in one check.
    expect(headings).toEqual([
      'Manager Email : This column is not one the import knows. (once)',
      'The file is not written in the encoding chosen (UTF-8). (192 times)',
      'columns.hireDate : This is not a date written as YYYY-MM-DD. (200 times)',
      'columns.basePay : This is not an amount written as 1234.56. (200 times)',
    ]);
    expect(text).toContain('row 2, columns.hireDate: "01/04/2010"');
    expect(text).toContain('row 2, columns.basePay: "60,000"');
    const problems = /<section class="panel panel-danger"[\s\S]*?<\/section>/.exec(
      refused.body,
    )?.[0];
    expect(textOf(problems ?? '')).not.toMatch(DEVELOPER_WORDS);
  });

  it('… and with the right choices, no edit: read as it is written, its 200 employees equal to the JSON’s', async () => {
    const checked = await check(
      { name: 'hris.csv', content: HRIS_CSV },
      { format: 'csv', cycle: JSON_CYCLE, ...CHOICES },
    );
    expect(checked.status).toBe(303);
    const page = textOf((await owner.get(checked.location ?? '')).body);
    expect(page).toContain(
      'Read as: separator \';\', encoding Windows-1252, dates MM/DD/YYYY, amounts 1,234.56, booleans TRUE/FALSE, eligibilityStatus in any letter case, columns ignored: "Manager Email".',
    );
    expect(page).toContain('HRIS 2025 (JSON) Unchanged 0 0 200 0');
    const before = await employeesOf(JSON_CYCLE);
    expect(await importChecked(checked.location ?? '')).toContain(
      'employees 0 created, 0 updated, 200 unchanged, 0 removed',
    );
    expect(await employeesOf(JSON_CYCLE)).toEqual(before);
  });

  it('the Excel workbook LibreOffice wrote: its typed cells read as they are, nothing to choose but the unknown column; its 200 employees equal to the JSON’s', async () => {
    const checked = await check(
      { name: 'hris.xlsx', content: HRIS_XLSX },
      { format: 'csv', cycle: JSON_CYCLE, ignoreUnknownColumns: 'on' },
    );
    expect(checked.status).toBe(303);
    const page = textOf((await owner.get(checked.location ?? '')).body);
    expect(page).toContain(
      'Read as: Excel workbook, sheet "Employees", cells as typed (date cells as dates, number cells as numbers), eligibilityStatus in any letter case, columns ignored: "Manager Email".',
    );
    expect(page).toContain('HRIS 2025 (JSON) Unchanged 0 0 200 0');
  });

  it('a new merit cycle made on the page is filled from the workbook', async () => {
    const form = hiddenFieldsOf((await owner.get(DATA)).body, `${DATA}/cycles`);
    const created = await owner.post(`${DATA}/cycles`, {
      ...form,
      name: 'HRIS 2026',
      startDate: '2026-01-01',
      endDate: '2026-12-31',
      status: 'active',
      currency: 'usd',
    });
    expect(created.status).toBe(303);
    const { rows } = await sql<{ id: string }>`
      select id from merit_cycles where name = 'HRIS 2026'`.execute(server.database.db);
    const cycle = rows[0]?.id ?? '';
    const checked = await check(
      { name: 'hris.xlsx', content: HRIS_XLSX },
      { format: 'csv', cycle, ignoreUnknownColumns: 'on' },
    );
    expect(checked.status).toBe(303);
    expect(await importChecked(checked.location ?? '')).toContain(
      'employees 200 created, 0 updated, 0 unchanged, 0 removed',
    );
    const filled = await employeesOf(cycle);
    expect(Object.keys(filled).sort()).toEqual(Object.keys(await employeesOf(JSON_CYCLE)).sort());
  });
});
