// Settings → Data in a real browser (headless Chromium): an owner checks a file (problems in
// words for people; then what would change), imports it with its progress shown, prunes
// with the box, is refused a file over 100 MB (made on disk as a stream, never held in
// memory) and an upload while another runs; an administrator sees the page too; creates a
// merit cycle; a spreadsheet's problems come grouped, the form as it was chosen; a cycle's
// Excel template downloads and checks as it is; the newcomer's HRIS export (LibreOffice's
// CSV: semicolons, Windows-1252, 03/15/2025, 85,000) is refused with every problem, then
// loads with the choices; a data set with more problems than shown links the whole list.
// Each page fits 390 px and 1280 px; screenshots at both widths go to
// test-results/screenshots/.
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser, screenshotsAtBothWidths } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { sendUpload } from '../helpers/uploads.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';
import { staffedDataSet } from '../helpers/web-client.js';

const MB = 1024 * 1024;
const HRIS_CSV = readFileSync(new URL('../fixtures/xlsx/hris.csv', import.meta.url));
const HRIS_CYCLE = 'mc_4e3c0b1a-7d2f-4c5e-9a1b-0000000000aa';
const column = (name: string, type: string, value: unknown) => ({ name, type, value });

describe('Settings → Data in the browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const files = mkdtempSync(join(tmpdir(), 'compplan-upload-files-'));

  const main = async () => (await page.locator('main').textContent())?.replace(/\s+/g, ' ') ?? '';

  const screenshots = (name: string) => screenshotsAtBothWidths(page, `data-${name}`);

  async function upload(name: string, content: string | Buffer, format = 'data-set') {
    await page.goto(`${server.url}/app/settings/data`);
    await page.locator(`input[name="format"][value="${format}"]`).check();
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(content) });
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.waitForLoadState('load');
  }

  /** An NDJSON data set of `count` employees of initech's one cycle. */
  function ndjson(count: number): string {
    const { organization, meritCycles } = staffedDataSet('initech', ['x@initech.example']);
    const [{ employees: [employee] = [], ...cycle }] = meritCycles as [
      (typeof meritCycles)[number],
    ];
    const lines = [JSON.stringify({ organization }), JSON.stringify({ meritCycle: cycle })];
    for (let i = 0; i < count; i++) {
      const email = `e${i}@initech.example`;
      lines.push(JSON.stringify({ employee: { ...employee, email }, meritCycle: cycle.name }));
    }
    return `${lines.join('\n')}\n`;
  }

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [staffedDataSet('initech', ['a@initech.example', 'b@initech.example'])],
    });
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await signInNewOwner(page, server, 'olivia.owner@initech.example');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(files, { recursive: true, force: true });
  });

  it('lists the merit cycles with their employees and last import', async () => {
    await page.getByRole('link', { name: 'Data' }).click();
    await page.waitForLoadState('load');
    expect(await main()).toMatch(
      /2026 Annual Merit mc_\S+ Active 2 .* by the command line 2 created/,
    );
    await screenshots('01-cycles');
  });

  it('a file with problems is refused, each problem in words for people; nothing changes', async () => {
    const bad = staffedDataSet('initech', ['a@initech.example', 'not-an-email']);
    await upload('bad.json', JSON.stringify(bad));
    expect(await page.getByRole('alert').textContent()).toBe(
      'The file was not imported: it has a problem. Nothing was changed.',
    );
    expect(await page.locator('ol.problems li').allTextContents()).toEqual([
      'Employee 2 (not-an-email) of merit cycle 1 ("2026 Annual Merit"), field "email": must be an email address',
    ]);
    await screenshots('02-problems');
  });

  // Two checks (with and without pruning) and an import of 40,000 employees: about 10 s on
  // a quiet 2-core machine, 25–30 s when others load it.
  it('check, then import: what would change, then what changed', { timeout: 120_000 }, async () => {
    await page.goto(`${server.url}/app/settings/data`);
    // A file on disk: Playwright hands a buffer of megabytes over to the page slowly.
    const file = join(files, 'initech.ndjson');
    writeFileSync(file, ndjson(40_000));
    await page.getByLabel('File', { exact: true }).setInputFiles(file);
    // The click returns once the answer has come; meanwhile the page shows the progress.
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.waitForURL(/check=/);
    expect(await main()).toContain('Checked: initech.ndjson');
    expect(await main()).toMatch(/2026 Annual Merit Unchanged 40,000 0 0 2/);
    expect(await main()).toContain('Also remove the 2 employees the file no longer lists');
    await screenshots('04-checked');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.waitForURL(/\/app\/settings\/data$/);
    expect(await main()).toContain(
      'Imported initech.ndjson: merit cycles 0 created, 0 updated, 1 unchanged; employees 40,000 created, 0 updated, 0 unchanged, 0 removed.',
    );
    expect(await main()).toMatch(/Active 40,002 .* by olivia\.owner@initech\.example/);
    await screenshots('05-imported');
  });

  it('prune: the box removes the employees the file no longer lists', {
    timeout: 120_000,
  }, async () => {
    await upload(
      'two.json',
      JSON.stringify(staffedDataSet('initech', ['a@initech.example', 'b@initech.example'])),
    );
    await page.getByLabel('Also remove the 40,000 employees the file no longer lists').check();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.waitForURL(/\/app\/settings\/data$/);
    expect(await main()).toContain('0 created, 0 updated, 2 unchanged, 40,000 removed');
    expect(await main()).toMatch(/Active 2 /);
  });

  it('a file over 100 MB is refused before it is read whole; nothing changes', async () => {
    // Written to disk in pieces: the test never holds it in memory.
    const big = join(files, 'big.ndjson');
    const out = createWriteStream(big);
    const piece = Buffer.alloc(MB, 'x\n');
    for (let written = 0; written < 101 * MB; written += MB) {
      if (!out.write(piece)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    await page.goto(`${server.url}/app/settings/data`);
    await page.getByLabel('File', { exact: true }).setInputFiles(big);
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toContain(
      'The file is larger than 100 MiB, the most the web application takes; nothing was changed.',
    );
    await screenshots('06-too-large');
  });

  it('while an upload runs the page shows its progress, and a second upload is refused, saying who is uploading', async () => {
    // Another upload of the organisation, stalled halfway (sent by hand, as a slow browser).
    const cookies = await browser.context.cookies(`${server.url}/app/settings/data`);
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    await page.goto(`${server.url}/app/settings/data`);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    // Its Content-Length promises 4 MiB; 64 KiB come, then nothing more.
    const stalled = sendUpload(`${server.url}/app/settings/data/check`, cookie, csrf, {
      declared: 4 * MB,
      send: 64 * 1024,
      end: false,
    });
    stalled.answer.catch(() => undefined);
    try {
      for (let tries = 0; ; tries++) {
        const progress = await fetch(`${server.url}/app/settings/data/progress`, {
          headers: { cookie },
        });
        if (((await progress.json()) as { running: boolean }).running) break;
        if (tries > 100) throw new Error('the stalled upload never ran');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The page's progress (what a form shows while its own upload runs), from the
      // server's account of the running upload: the form's submit event, without sending.
      await page.evaluate(
        "document.querySelector('form.upload-form').dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }))",
      );
      await page
        .locator('.upload-progress [role="status"]')
        .filter({ hasText: /^Uploading: \d+ %$/ })
        .waitFor();
      expect(await page.locator('.upload-progress progress').first().getAttribute('max')).toBe(
        '100',
      );
      await screenshots('07-progress');
      await upload('two.json', JSON.stringify(staffedDataSet('initech', ['a@initech.example'])));
      expect(await page.getByRole('alert').textContent()).toMatch(
        /^Another upload for Initech Corp is running: olivia\.owner@initech\.example is uploading a file \(since \d\d:\d\d UTC\)\. Wait until it has finished, then upload again; nothing was changed\.$/,
      );
      await screenshots('08-busy');
    } finally {
      stalled.abort();
    }
  });

  it('creates a merit cycle: a bad field said at its place, then the new cycle chosen for its spreadsheet', async () => {
    await page.goto(`${server.url}/app/settings/data`);
    await page.locator('#cycle-name').fill('2027 Annual Merit');
    await page.locator('#cycle-startDate').fill('2027-01-01');
    await page.locator('#cycle-endDate').fill('2027-03-31');
    await page.locator('#cycle-status').selectOption('inactive');
    await page.locator('#cycle-currency').fill('ZZZ');
    await page.getByRole('button', { name: 'Create merit cycle' }).click();
    await page.waitForLoadState('load');
    expect(await page.locator('#cycle-currency-error').textContent()).toBe(
      '“ZZZ” is not a currency code: give the three-letter code, such as USD, EUR or GBP.',
    );
    expect(await page.locator('#cycle-name').inputValue()).toBe('2027 Annual Merit');
    await page.locator('#new-cycle-title').scrollIntoViewIfNeeded();
    await screenshots('09-new-cycle-refused');
    await page.locator('#cycle-currency').fill('EUR');
    await page.getByRole('button', { name: 'Create merit cycle' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('status').first().textContent()).toBe(
      'Merit cycle 2027 Annual Merit created. Load its employees: download its Excel template or CSV template, fill it in, and upload it below (it is chosen already).',
    );
    expect(await page.locator('#format-csv').isChecked()).toBe(true);
    expect(await page.locator('#upload-cycle option:checked').textContent()).toMatch(
      /^2027 Annual Merit \(mc_/,
    );
    await screenshots('10-new-cycle-created');
  });

  it('a spreadsheet with problems: grouped, the whole list to download, and the form as it was chosen', async () => {
    await page.goto(`${server.url}/app/settings/data`);
    // The reading choices are shown for a CSV file only.
    await page.locator('#format-data-set').check();
    expect(await page.getByLabel('Dates').isVisible()).toBe(false);
    await page.locator('#format-csv').check();
    expect(await page.getByLabel('Dates').isVisible()).toBe(true);
    const annual = await page
      .locator('#upload-cycle option', { hasText: /^2026 Annual Merit/ })
      .getAttribute('value');
    await page
      .getByLabel('Merit cycle (for a CSV file or an Excel workbook)')
      .selectOption(annual ?? '');
    await page.getByLabel('Dates').selectOption('DD/MM/YYYY');
    await page.getByLabel('Ignore columns the import does not know').check();
    const rows = Array.from({ length: 12 }, (_, i) => `bad${i},A,B,USD,Eligible,x`);
    const csv = `email,firstName,lastName,currencyCode,eligibilityStatus,Notes\n${rows.join('\n')}\n`;
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe(
      'The file was not imported: it has 12 problems. Nothing was changed.',
    );
    expect(await page.locator('.read-as').textContent()).toBe(
      `Read as: separator ',', encoding UTF-8, dates DD/MM/YYYY, amounts 1234.56, eligibilityStatus in any letter case, columns ignored: "Notes".`,
    );
    const group = page.locator('.problem-group').first();
    expect((await group.locator('h3').textContent())?.replace(/\s+/g, ' ')).toBe(
      'email: This is not an email address. (12 times)',
    );
    expect(await group.locator('.problem-examples li').allTextContents()).toEqual([
      'row 2, email: "bad0"',
      'row 3, email: "bad1"',
      'row 4, email: "bad2"',
      'row 5, email: "bad3"',
      'row 6, email: "bad4"',
    ]);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download every problem (CSV)' }).first().click(),
    ]);
    expect(download.suggestedFilename()).toBe('problems.csv');
    // The form as it was chosen.
    expect(await page.locator('#format-csv').isChecked()).toBe(true);
    expect(await page.getByLabel('Dates').inputValue()).toBe('DD/MM/YYYY');
    expect(await page.getByLabel('Ignore columns the import does not know').isChecked()).toBe(true);
    await screenshots('11-sheet-problems');
  });

  it('a cycle’s Excel template downloads beside its CSV template, and checks as it is', async () => {
    await page.goto(`${server.url}/app/settings/data`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Excel template of 2026 Annual Merit' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^template-mc_[0-9a-f-]{36}\.xlsx$/);
    const template = join(files, 'template.xlsx');
    await download.saveAs(template);
    await page.locator('#format-csv').check();
    const annual = await page
      .locator('#upload-cycle option', { hasText: /^2026 Annual Merit/ })
      .getAttribute('value');
    await page
      .getByLabel('Merit cycle (for a CSV file or an Excel workbook)')
      .selectOption(annual ?? '');
    await page.getByLabel('File', { exact: true }).setInputFiles(template);
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.waitForURL(/check=/);
    expect(await main()).toContain('Checked: template.xlsx The file has no problems.');
    await screenshots('12-template-checked');
  });

  it('the newcomer’s HRIS export as LibreOffice saved it: every problem at once with the defaults, then loaded with the choices', async () => {
    await server.load({
      organization: { slug: 'initech', name: 'Initech Corp', apiKeysEnabled: true },
      meritCycles: [
        {
          id: HRIS_CYCLE,
          name: 'HRIS 2025',
          status: 'active',
          startDate: '2025-01-01T00:00:00.000Z',
          endDate: '2025-12-31T00:00:00.000Z',
          currency: 'USD',
          employees: [
            {
              email: 'seed@initech.example',
              firstName: 'Seed',
              lastName: 'Row',
              currencyCode: 'USD',
              eligibilityStatus: 'eligible',
              columns: {
                hireDate: column('Hire Date', 'date', '2020-01-01'),
                basePay: column('Base Pay', 'currency', { USD: '1' }),
                manager: column('Manager', 'boolean', false),
                department: column('Department', 'text', 'Ops'),
              },
            },
          ],
        },
      ],
    });
    const choose = async () => {
      await page.goto(`${server.url}/app/settings/data`);
      await page.locator('#format-csv').check();
      await page
        .getByLabel('Merit cycle (for a CSV file or an Excel workbook)')
        .selectOption(HRIS_CYCLE);
    };
    const send = async () => {
      await page
        .getByLabel('File', { exact: true })
        .setInputFiles({ name: 'hris.csv', mimeType: 'text/csv', buffer: HRIS_CSV });
      await page.getByRole('button', { name: 'Check file' }).click();
      await page.waitForLoadState('load');
    };
    await choose();
    await send();
    expect(await page.getByRole('alert').textContent()).toBe(
      'The file was not imported: it has 593 problems. Nothing was changed.',
    );
    expect(
      (await page.locator('.problem-group h3').allTextContents()).map((text) =>
        text.replace(/\s+/g, ' '),
      ),
    ).toEqual([
      'Manager Email: This column is not one the import knows. (once)',
      'The file is not written in the encoding chosen (UTF-8). (192 times)',
      'columns.hireDate: This is not a date written as YYYY-MM-DD. (200 times)',
      'columns.basePay: This is not an amount written as 1234.56. (200 times)',
    ]);
    await screenshots('13-hris-refused');

    await page.getByLabel('Dates').selectOption('MM/DD/YYYY');
    await page.getByLabel('Amounts and numbers').selectOption('1,234.56');
    await page.getByLabel('Encoding', { exact: true }).selectOption('windows-1252');
    await page.getByLabel('Ignore columns the import does not know').check();
    await send();
    await page.waitForURL(/check=/);
    expect(await main()).toContain('Checked: hris.csv The file has no problems.');
    expect(await main()).toMatch(/HRIS 2025 Unchanged 200 0 0 1/);
    await screenshots('14-hris-checked');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.waitForURL(/\/app\/settings\/data$/);
    expect(await main()).toContain(
      'Imported hris.csv: merit cycles 0 created, 0 updated, 1 unchanged; employees 200 created, 0 updated, 0 unchanged, 0 removed.',
    );
    await screenshots('15-hris-imported');
  });

  it('a data set with more problems than shown: how many more, and the whole list to download', async () => {
    const emails = Array.from({ length: 80 }, (_, index) => `not-an-email-${index}`);
    await upload('many.json', JSON.stringify(staffedDataSet('initech', emails)));
    expect(await page.getByRole('alert').textContent()).toBe(
      'The file was not imported: it has 80 problems. Nothing was changed.',
    );
    expect(await page.locator('ol.problems li').count()).toBe(50);
    expect((await page.locator('.problems-more').textContent())?.replace(/\s+/g, ' ')).toBe(
      'And 30 more problems: Download every problem (CSV) to see every one.',
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('.problems-more a').click(),
    ]);
    expect(download.suggestedFilename()).toBe('problems.csv');
    const list = join(files, 'problems.csv');
    await download.saveAs(list);
    expect(
      readFileSync(list, 'utf8')
        .split('\r\n')
        .filter((line) => line !== ''),
    ).toHaveLength(81);
    await screenshots('16-data-set-problems');
  });
});
