// Settings → Connections' slice fields in a real browser (issue #48): as the owner types
// the Rows conditions and a manager's email, the number of employees the slice reads today
// updates (the page's script asks slice-count); the key made shows its slice in the
// new-key box and the list. Screenshots of the form with a slice at 1280 and 390 px,
// nothing wider than the window.

import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setManagerColumn } from '../../src/row-slices/manager-setting.js';
import { MATRIX_ORG, slicedDataSet } from '../fixtures/sliced-data-set.js';
import {
  type Browser,
  launchBrowser,
  SCREENSHOTS,
  screenshotsAtBothWidths,
} from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';

describe('the slice fields of the generate form, in a browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [slicedDataSet()] });
    await setManagerColumn(server.database, MATRIX_ORG, 'managerEmail');
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await signInNewOwner(page, server, 'owner@matrixco.example', undefined, MATRIX_ORG);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('counts the employees as the owner types, then makes the key with the slice it showed', async () => {
    const count = page.locator('#slice-count');
    await page.getByLabel('Key name').fill('Sales team of Person One – regional Power BI');
    await page.getByLabel('Rows', { exact: true }).pressSequentially('department = Sales');
    await expect
      .poll(() => count.textContent())
      .toBe('Reads 2 employees today: those where department = Sales.');
    await page.getByLabel('Rows', { exact: true }).fill('department = sales');
    await page.getByLabel('Rows', { exact: true }).dispatchEvent('input');
    await expect
      .poll(() => count.textContent())
      .toMatch(/^Reads nobody today: .* Check the values and their letter case/);
    await page
      .getByLabel('Rows', { exact: true })
      .fill('department in (Sales, Engineering) and employee/jobTitle in (Seller, Engineer)');
    await page
      .getByLabel('Reports to', { exact: true })
      .pressSequentially('person1@matrixco.example');
    await expect
      .poll(() => count.textContent())
      .toBe(
        'Reads 3 employees today: those where department in (Engineering, Sales) and employee/jobTitle in (Engineer, Seller) and reports to person1@matrixco.example.',
      );
    await screenshotsAtBothWidths(page, 'connections-slice-form');

    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');
    const facts = page.getByLabel('What the new key reads');
    await expect
      .poll(() => facts.locator('div', { hasText: 'Employees' }).locator('dd').textContent())
      .toMatch(/^Reads 3 employees today/);
    const row = page.locator('table.key-list tbody tr').first();
    expect(await row.locator('.key-slice').textContent()).toBe(
      'Only where department in (Engineering, Sales) and employee/jobTitle in (Engineer, Seller) and reports to person1@matrixco.example',
    );
    await screenshotsAtBothWidths(page, 'connections-slice-key');
    // The list alone on a phone, where the slice's long description must wrap in its cell.
    await page.setViewportSize({ width: 390, height: 844 });
    await page
      .locator('table.key-list')
      .screenshot({ path: join(SCREENSHOTS, 'connections-slice-list-390.png') });
    const box = await row.locator('.key-slice').boundingBox();
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
  });
});
