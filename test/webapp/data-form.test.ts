// Settings → Data over real HTTP (both dialects), as the people who load data see it: the
// upload form keeps every choice after a check or a refusal; a file that is not what was
// chosen says what it looks like and offers the right choice; a spreadsheet's problems
// come grouped with their count, column, first rows and what to do, with the whole list
// to download; a cycle's CSV and Excel templates download (for the signed-in organisation's
// cycles only), the workbook's cells typed, and each loads back into its cycle without a
// problem; a merit cycle is created from the page, each bad field said in plain words.
import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  csrfTokenOf,
  hiddenFieldsOf,
  signedInClient,
  textOf,
  type WebClient,
  webDataSet,
} from '../helpers/web-client.js';

const DATA = '/app/settings/data';
const WORKBOOK = new URL('../fixtures/xlsx/employees.xlsx', import.meta.url);
const FIRST = 'mc_0a1b2c3d-0000-4000-8000-000000000001';
const SECOND = 'mc_0a1b2c3d-0000-4000-8000-000000000002';
const GLOBEX = 'mc_0a1b2c3d-0000-4000-8000-000000000003';
const TYPED = 'mc_0a1b2c3d-0000-4000-8000-000000000004';
const HEADER = 'email,firstName,lastName,currencyCode,eligibilityStatus,columns.hireDate';

/** Initech with two cycles; the second has employees with a Hire Date column. */
function initech(): DataSetInput {
  const base = webDataSet('initech');
  const [cycle] = base.meritCycles;
  if (!cycle) throw new Error('webDataSet has a cycle');
  return {
    ...base,
    meritCycles: [
      { ...cycle, id: FIRST },
      {
        ...cycle,
        id: SECOND,
        name: '2026 Mid-year',
        currency: 'EUR',
        employees: [
          {
            email: 'ana@initech.example',
            firstName: 'Ana',
            lastName: 'Lima',
            currencyCode: 'EUR',
            eligibilityStatus: 'eligible',
            columns: { hireDate: { name: 'Hire Date', type: 'date', value: '2024-01-15' } },
          },
        ],
      },
      {
        ...cycle,
        id: TYPED,
        name: '2026 Pay review',
        currency: 'EUR',
        employees: [
          {
            email: 'pat@initech.example',
            firstName: 'Pat',
            lastName: 'Lee',
            currencyCode: 'EUR',
            eligibilityStatus: 'eligible',
            columns: {
              band: {
                name: 'Band',
                type: 'composite',
                value: { grade: 'L3', midpoint: { EUR: '90000.00' } },
              },
              basePay: { name: 'Base Pay', type: 'currency', value: { EUR: '70000.00' } },
              city: { name: 'City', type: 'text', value: 'Lyon' },
              hireDate: { name: 'Hire Date', type: 'date', value: '2021-05-01' },
              manager: { name: 'Manager', type: 'boolean', value: false },
              ratio: { name: 'Compa-ratio', type: 'number', value: '0.97' },
            },
          },
        ],
      },
    ],
  };
}

function globex(): DataSetInput {
  const base = webDataSet('globex');
  return { ...base, meritCycles: base.meritCycles.map((cycle) => ({ ...cycle, id: GLOBEX })) };
}

/** The upload form's choices as the page shows them. */
function formState(body: string) {
  const start = body.indexOf(`action="${DATA}/check"`);
  const form = body.slice(start, body.indexOf('</form>', start));
  const selected = (id: string) => {
    const select = form.slice(
      form.indexOf(`id="${id}"`),
      form.indexOf('</select>', form.indexOf(`id="${id}"`)),
    );
    return /<option value="([^"]*)" selected>/.exec(select)?.[1];
  };
  return {
    format: /name="format" value="([^"]+)" checked>/.exec(form)?.[1],
    cycle: selected('upload-cycle'),
    dates: selected('upload-dates'),
    amounts: selected('upload-amounts'),
    encoding: selected('upload-encoding'),
    ignoreUnknownColumns: /name="ignoreUnknownColumns" type="checkbox" value="on" checked/.test(
      form,
    )
      ? 'on'
      : undefined,
  };
}

const CHOSEN = {
  format: 'csv',
  cycle: SECOND,
  dates: 'DD/MM/YYYY',
  amounts: '1.234,56',
  encoding: 'windows-1252',
  ignoreUnknownColumns: 'on',
};

const goodCsv = `${HEADER}\nana@initech.example,Ana,Lima,EUR,Eligible,15/01/2024\n`;
const badRows = Array.from(
  { length: 7 },
  (_, index) => `bad${index + 1},A,B,EUR,eligible,${index === 0 ? '03/15/2025' : '01/02/2025'}`,
);
const badCsv = `${HEADER}\n${badRows.join('\n')}\n`;
const dataSetJson = JSON.stringify(initech());

describe('Settings → Data: what a person sees', () => {
  let server: TestServer;
  let owner: WebClient;
  let other: WebClient;

  async function check(
    client: WebClient,
    file: { name: string; content: string | Uint8Array },
    fields: Record<string, string>,
  ) {
    const _csrf = await client.csrfToken(DATA);
    return client.upload(`${DATA}/check`, { _csrf, ...fields }, file);
  }

  async function postCycle(client: WebClient, fields: Record<string, string>) {
    const page = await client.get(DATA);
    return client.post(`${DATA}/cycles`, {
      ...hiddenFieldsOf(page.body, `${DATA}/cycles`),
      ...fields,
    });
  }

  const cycleNames = async (slug = 'initech') => {
    const { rows } = await sql<{ name: string }>`select c.name from merit_cycles c
      join organizations o on o.id = c.organization_id where o.slug = ${slug} order by c.name`.execute(
      server.database.db,
    );
    return rows.map((row) => row.name);
  };

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [initech(), globex()] });
    owner = (await signedInClient(server, 'owner@initech.example', 'owner')).client;
    other = (await signedInClient(server, 'owner@globex.example', 'owner', 'globex')).client;
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    {
      outcome: 'a spreadsheet with problems (422)',
      fields: CHOSEN,
      file: { name: 'employees.csv', content: badCsv },
      status: 422,
      shown: CHOSEN,
    },
    {
      outcome: 'a data set chosen as CSV (422): the data set offered',
      fields: CHOSEN,
      file: { name: 'employees.csv', content: dataSetJson },
      status: 422,
      shown: { ...CHOSEN, format: 'data-set' },
    },
    {
      outcome: 'a CSV file chosen as a data set (422): CSV offered',
      fields: { ...CHOSEN, format: 'data-set' },
      file: { name: 'data.json', content: goodCsv },
      status: 422,
      shown: CHOSEN,
    },
    {
      outcome: 'a check without problems (303, then the page)',
      fields: CHOSEN,
      file: { name: 'employees.csv', content: goodCsv },
      status: 303,
      shown: CHOSEN,
    },
  ])('the form keeps every choice after $outcome', async ({ fields, file, status, shown }) => {
    const answer = await check(owner, file, fields);
    expect(answer.status).toBe(status);
    const page = status === 303 ? await owner.get(answer.location ?? '') : answer;
    expect(formState(page.body)).toEqual(shown);
  });

  it('the form keeps the checked file’s choices when its Import is refused (the data changed), and the prune box as sent', async () => {
    const checked = await check(owner, { name: 'employees.csv', content: goodCsv }, CHOSEN);
    expect(checked.status).toBe(303);
    const page = await owner.get(checked.location ?? '');
    expect(textOf(page.body)).toContain(
      "Read as: separator ',', encoding Windows-1252, dates DD/MM/YYYY, amounts 1.234,56, eligibilityStatus in any letter case.",
    );
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    expect(
      (
        await postCycle(owner, {
          name: 'Changes the data',
          startDate: '2026-01-01',
          endDate: '2026-12-31',
          status: 'active',
          currency: 'USD',
        })
      ).status,
    ).toBe(303);
    const refused = await owner.post(`${DATA}/import`, {
      _csrf: csrfTokenOf(page.body),
      token,
      prune: 'on',
    });
    expect(refused.status).toBe(409);
    expect(formState(refused.body)).toEqual(CHOSEN);
  });

  it('a file that is not what was chosen says what it looks like, and nothing is kept', async () => {
    const asDataSet = await check(
      owner,
      { name: 'employees.csv', content: goodCsv },
      { format: 'data-set' },
    );
    expect(/<div class="notice notice-error" role="alert">([^<]*)</.exec(asDataSet.body)?.[1]).toBe(
      'This file looks like a CSV file (a spreadsheet saved as CSV). Choose &#39;One merit cycle&#39;s employees, as CSV or an Excel workbook&#39; and the cycle to load it into. Nothing was changed.',
    );
    const asCsv = await check(
      owner,
      { name: 'data.csv', content: `\uFEFF  ${dataSetJson}` },
      { format: 'csv', cycle: FIRST },
    );
    expect(textOf(asCsv.body)).toContain(
      "This file looks like a data set in JSON or NDJSON (it starts with { or [), not a spreadsheet. Choose 'A data set: the organisation and its merit cycles' to load it. Nothing was changed.",
    );
    expect(asCsv.body).not.toContain('not valid JSON');
    // An Excel workbook (LibreOffice's, test/fixtures/xlsx) chosen as a data set.
    const workbook = await check(
      owner,
      { name: 'employees.xlsx', content: readFileSync(WORKBOOK) },
      { format: 'data-set' },
    );
    expect(/<div class="notice notice-error" role="alert">([^<]*)</.exec(workbook.body)?.[1]).toBe(
      'This file looks like an Excel workbook. Choose &#39;One merit cycle&#39;s employees, as CSV or an Excel workbook&#39; and the cycle to load it into. Nothing was changed.',
    );
  });

  it('a spreadsheet’s problems come grouped: count, column, the first rows as written, what to do, its help, and the whole list as CSV', async () => {
    const refused = await check(
      owner,
      { name: 'employees.csv', content: badCsv },
      { format: 'csv', cycle: SECOND, dates: 'DD/MM/YYYY' },
    );
    expect(refused.status).toBe(422);
    const text = textOf(refused.body);
    expect(text).toContain('The file was not imported: it has 8 problems. Nothing was changed.');
    expect(text).toContain(
      "Read as: separator ',', encoding UTF-8, dates DD/MM/YYYY, amounts 1234.56.",
    );
    const groups = [
      ...refused.body.matchAll(
        /<li class="problem-group"[\s\S]*?<\/li>\s*<\/ul>[\s\S]*?(?=<li class="problem-group"|<\/ol>)/g,
      ),
    ].map(([group]) => textOf(group));
    expect(groups).toEqual([
      'columns.hireDate : This is not a date written as DD/MM/YYYY. (once) Write the date as DD/MM/YYYY (for example 15/03/2025), or choose how the file writes dates. More about this problem : This is not a date written as DD/MM/YYYY. row 2, columns.hireDate: "03/15/2025"',
      'email : This is not an email address. (7 times) Write the employee’s email address, such as ada@example.com. More about this problem : This is not an email address. row 2, email: "bad1" row 3, email: "bad2" row 4, email: "bad3" row 5, email: "bad4" row 6, email: "bad5" And 2 more like them: Download every problem (CSV) to see every row.',
    ]);
    expect(refused.body).toContain('<a href="/app/help/import#email">');
    expect(refused.body).toContain('<a href="/app/help/import#date">');
    expect(text).toContain(
      'Download every problem (CSV) : every problem with its row, column and value, to fix the file in your spreadsheet.',
    );
    expect(text).not.toContain('… and');
    const list = await owner.get(`${DATA}/problems.csv`);
    expect(list.status).toBe(200);
    expect(list.body.split('\r\n').filter((line) => line !== '')).toHaveLength(9);
  });

  it('a cycle’s CSV template: the header its import reads and one example row, which checks without a problem; another organisation’s cycle is not found', async () => {
    const page = await owner.get(DATA);
    expect(page.body).toContain(
      `<a href="${DATA}/cycles/${SECOND}/template.csv" download>CSV template<span class="visually-hidden"> of 2026 Mid-year</span></a>`,
    );
    const template = await owner.get(`${DATA}/cycles/${SECOND}/template.csv`);
    expect(template.status).toBe(200);
    expect(template.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(template.headers.get('content-disposition')).toBe(
      `attachment; filename="template-${SECOND}.csv"`,
    );
    expect(template.body).toBe(
      'email,firstName,lastName,preferredName,currencyCode,eligibilityStatus,columns.hireDate\r\nada@example.com,Ada,Lovelace,,EUR,Eligible,2025-03-15\r\n',
    );
    const checked = await check(
      owner,
      { name: 'template.csv', content: template.body },
      { format: 'csv', cycle: SECOND },
    );
    expect(checked.status).toBe(303);

    expect((await owner.get(`${DATA}/cycles/${GLOBEX}/template.csv`)).status).toBe(404);
    expect((await other.get(`${DATA}/cycles/${SECOND}/template.csv`)).status).toBe(404);
    expect((await other.get(`${DATA}/cycles/${GLOBEX}/template.csv`)).status).toBe(200);
    expect((await owner.get(`${DATA}/cycles/nope/template.csv`)).status).toBe(404);
  });

  it('a cycle’s Excel template: the header, one example row of typed cells, the columns named on a sheet of their own; it loads back into its cycle without a problem', async () => {
    const page = await owner.get(DATA);
    expect(page.body).toContain(
      `<a href="${DATA}/cycles/${TYPED}/template.xlsx" download>Excel template<span class="visually-hidden"> of 2026 Pay review</span></a>`,
    );
    const response = await fetch(`${server.url}${DATA}/cycles/${TYPED}/template.xlsx`, {
      headers: { cookie: [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="template-${TYPED}.xlsx"`,
    );
    const content = new Uint8Array(await response.arrayBuffer());

    // Read back with exceljs: the header, then typed cells (a date a date, a number a number).
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(content as unknown as ArrayBuffer);
    expect(book.worksheets.map((sheet) => sheet.name)).toEqual(['Employees', 'Columns']);
    const sheet = book.getWorksheet('Employees');
    if (!sheet) throw new Error('no sheet "Employees"');
    const values = (row: number) => (sheet.getRow(row).values as unknown[]).slice(1);
    const header = [
      'email',
      'firstName',
      'lastName',
      'preferredName',
      'currencyCode',
      'eligibilityStatus',
      'columns.band.grade',
      'columns.band.midpoint',
      'columns.basePay',
      'columns.city',
      'columns.hireDate',
      'columns.manager',
      'columns.ratio',
    ];
    expect(values(1)).toEqual(header);
    expect(values(2)).toEqual([
      'ada@example.com',
      'Ada',
      'Lovelace',
      undefined,
      'EUR',
      'Eligible',
      'Example',
      85000,
      85000,
      'Example',
      new Date('2025-03-15T00:00:00.000Z'),
      true,
      3,
    ]);
    expect(sheet.rowCount).toBe(2);
    expect(sheet.getCell('K2').numFmt).toBe('yyyy-mm-dd');
    expect(sheet.getCell('I2').numFmt).toBe('#,##0.00');
    const columns = book.getWorksheet('Columns');
    const described = (columns?.getSheetValues() ?? [])
      .slice(2)
      .map((row) => (row as unknown[]).slice(1, 3));
    expect(described).toEqual([
      ['email', 'Email'],
      ['firstName', 'First name'],
      ['lastName', 'Last name'],
      ['preferredName', 'Preferred name'],
      ['currencyCode', 'Currency'],
      ['eligibilityStatus', 'Eligibility'],
      ['columns.band.grade', 'Band: grade'],
      ['columns.band.midpoint', 'Band: midpoint'],
      ['columns.basePay', 'Base Pay'],
      ['columns.city', 'City'],
      ['columns.hireDate', 'Hire Date'],
      ['columns.manager', 'Manager'],
      ['columns.ratio', 'Compa-ratio'],
    ]);
    expect(columns?.getCell('C10').value).toBe(
      "An amount in EUR, the merit cycle's currency (no currency sign).",
    );

    // Uploaded as it is, with the form's defaults: no problem; imported into its cycle.
    const checked = await check(
      owner,
      { name: 'template.xlsx', content },
      { format: 'csv', cycle: TYPED },
    );
    expect(checked.status).toBe(303);
    const checkedPage = await owner.get(checked.location ?? '');
    expect(textOf(checkedPage.body)).toContain('The file has no problems.');
    expect(textOf(checkedPage.body)).toContain(
      'Read as: Excel workbook, sheet "Employees", cells as typed (date cells as dates, number cells as numbers)',
    );
    const imported = await owner.post(`${DATA}/import`, {
      _csrf: csrfTokenOf(checkedPage.body),
      token: /name="token" value="([^"]+)"/.exec(checkedPage.body)?.[1] ?? '',
    });
    expect(imported.status).toBe(303);
    const { rows } = await sql<{ body: string }>`select body from merit_cycle_employees
      where merit_cycle_id = ${TYPED} and email = 'ada@example.com'`.execute(server.database.db);
    expect(rows).toHaveLength(1);
    const stored = JSON.parse(rows[0]?.body ?? '{}') as Record<string, unknown>;
    expect(stored).toMatchObject({
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      preferredName: null,
      currencyCode: { code: 'EUR', value: 'Euro' },
      eligibilityStatus: 'eligible',
      columns: {
        band: {
          name: 'Band',
          type: 'composite',
          value: { grade: 'Example', midpoint: { EUR: '85000' } },
        },
        basePay: { name: 'Base Pay', type: 'currency', value: { EUR: '85000' } },
        city: { name: 'City', type: 'text', value: 'Example' },
        hireDate: { name: 'Hire Date', type: 'date', value: '2025-03-15' },
        manager: { name: 'Manager', type: 'boolean', value: true },
        ratio: { name: 'Compa-ratio', type: 'number', value: '3' },
      },
    });

    expect((await owner.get(`${DATA}/cycles/${GLOBEX}/template.xlsx`)).status).toBe(404);
    expect((await other.get(`${DATA}/cycles/${TYPED}/template.xlsx`)).status).toBe(404);
  });

  const VALID = {
    name: '2027 Annual Merit',
    startDate: '2027-01-01',
    endDate: '2027-03-31',
    status: 'inactive',
    currency: 'gbp',
  };

  it.each([
    { field: 'name', value: '', says: 'Give the merit cycle a name.' },
    { field: 'name', value: '   ', says: 'Give the merit cycle a name.' },
    { field: 'name', value: 'x'.repeat(201), says: 'Shorten the name to at most 200 characters.' },
    {
      field: 'name',
      value: '2026 Mid-year',
      says: 'There is a merit cycle named “2026 Mid-year” already: choose another name, or load that cycle’s employees with the upload form.',
    },
    { field: 'startDate', value: '', says: 'Give the start date.' },
    {
      field: 'startDate',
      value: '2027-02-30',
      says: 'Give the start date as a date of the calendar, such as 2026-01-01.',
    },
    {
      field: 'endDate',
      value: '31/03/2027',
      says: 'Give the end date as a date of the calendar, such as 2026-12-31.',
    },
    {
      field: 'endDate',
      value: '2026-12-31',
      says: 'The end date is before the start date: give an end date on or after it.',
    },
    { field: 'status', value: 'open', says: 'Choose a status: Active, Inactive or Finalized.' },
    { field: 'currency', value: '', says: 'Give the currency, such as USD, EUR or GBP.' },
    {
      field: 'currency',
      value: 'Euro',
      says: '“Euro” is not a currency code: give the three-letter code, such as USD, EUR or GBP.',
    },
  ])(
    'a new merit cycle with $field “$value” is refused in plain words, nothing made',
    async ({ field, value, says }) => {
      const before = await cycleNames();
      const refused = await postCycle(owner, { ...VALID, [field]: value });
      expect(refused.status).toBe(422);
      expect(textOf(refused.body)).toContain(
        'The merit cycle was not created: see what to change at its fields below.',
      );
      expect(
        new RegExp(`<p class="field-error" id="cycle-${field}-error">([^<]*)</p>`).exec(
          refused.body,
        )?.[1],
      ).toBe(says.replace(/'/g, '&#39;'));
      // What was typed is shown again.
      if (field !== 'status') {
        expect(refused.body).toContain(`id="cycle-${field}"`);
        expect(refused.body).toContain(`value="${value.replace(/"/g, '&quot;')}"`);
      }
      expect(await cycleNames()).toEqual(before);
    },
  );

  it('a new merit cycle is created as an import of the user, then chosen on the upload form with its template offered', async () => {
    const created = await postCycle(owner, VALID);
    expect(created.status).toBe(303);
    expect(created.location).toBe(DATA);
    const { rows } = await sql<{
      id: string;
      status: string;
      currency: string;
      start_date: unknown;
      end_date: unknown;
    }>`
      select c.id, c.status, c.currency, c.start_date, c.end_date from merit_cycles c where c.name = ${VALID.name}`.execute(
      server.database.db,
    );
    expect(rows).toHaveLength(1);
    const cycle = rows[0];
    expect([cycle?.status, cycle?.currency]).toEqual(['inactive', 'GBP']);
    const page = await owner.get(DATA);
    expect(textOf(page.body)).toContain(
      'Merit cycle 2027 Annual Merit created. Load its employees: download its Excel template or CSV template , fill it in, and upload it below (it is chosen already).',
    );
    expect(formState(page.body)).toMatchObject({ format: 'csv', cycle: cycle?.id });
    expect(textOf(page.body)).toMatch(
      /2027 Annual Merit mc_[0-9a-f-]{36} Inactive 0 \d{4}-\d\d-\d\d \d\d:\d\d UTC by owner@initech\.example The cycle only, not its employees/,
    );
    const { rows: audit } = await sql<{ action: string; actor: string }>`
      select action, actor from audit_entries where action = 'import' and actor = 'owner@initech.example'`.execute(
      server.database.db,
    );
    expect(audit.length).toBeGreaterThanOrEqual(1);
    const template = await owner.get(`${DATA}/cycles/${cycle?.id}/template.csv`);
    expect(template.body).toBe(
      'email,firstName,lastName,preferredName,currencyCode,eligibilityStatus\r\nada@example.com,Ada,Lovelace,,GBP,Eligible\r\n',
    );
    // Filled from a spreadsheet.
    const checked = await check(
      owner,
      {
        name: 'new.csv',
        content: `${template.body}bo@initech.example,Bo,Chen,,GBP,Ineligible\r\n`,
      },
      { format: 'csv', cycle: cycle?.id ?? '' },
    );
    expect(checked.status).toBe(303);
    const importPage = await owner.get(checked.location ?? '');
    const token = /name="token" value="([^"]+)"/.exec(importPage.body)?.[1] ?? '';
    const imported = await owner.post(`${DATA}/import`, {
      _csrf: csrfTokenOf(importPage.body),
      token,
    });
    expect(imported.status).toBe(303);
    expect(textOf((await owner.get(DATA)).body)).toContain(
      'employees 2 created, 0 updated, 0 unchanged, 0 removed',
    );
  });
});
