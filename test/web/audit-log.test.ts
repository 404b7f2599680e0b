// Settings → Audit log in a real browser: an owner filters the log by key and by action
// with the form, and the page fits a 390 px phone (each entry a block, nothing wider than
// the screen) and a 1280 px desktop. Screenshots at both widths.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser, SCREENSHOTS, screenshot } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';
import { webDataSet } from '../helpers/web-client.js';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const PAGE = '/app/settings/audit-log';
const LONG_PATH =
  '/v1/compensationPlanning/meritCycles/mc_00000000-0000-4000-8000-000000000000/employees';

// The pieces of the entries' API paths (the text after each slash) that a line break
// splits. (Browser code as text.)
const SPLIT_PIECES = `(() => {
  const split = [];
  for (const path of document.querySelectorAll('.audit-path')) {
    const walker = document.createTreeWalker(path, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(node);
      const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      if (lines.size > 1) split.push(node.textContent);
    }
  }
  return split;
})()`;

// (Browser code as text: the project's TypeScript has no DOM library.)
const LAYOUT = `(() => ({
  pageWidth: document.documentElement.scrollWidth,
  rows: document.querySelectorAll('.audit-list tbody tr').length,
  tableFits: (() => {
    const wrap = document.querySelector('.audit-list').parentElement;
    return wrap.scrollWidth <= wrap.clientWidth;
  })(),
  headVisible: (() => {
    const head = document.querySelector('.audit-list thead');
    return head ? head.getBoundingClientRect().height > 1 : false;
  })(),
}))()`;

interface Layout {
  pageWidth: number;
  /** The table within its panel, no column scrolled out of sight. */
  tableFits: boolean;
  rows: number;
  headVisible: boolean;
}

describe('Settings → Audit log in the browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
    const keys = [
      await server.createKey('initech', 'Looker export'),
      await server.createKey('initech', 'Payroll sync'),
    ];
    for (const [n, key] of [...keys, ...keys, ...keys].entries()) {
      const path = n % 2 === 0 ? '/ping' : '/v1/compensationPlanning/meritCycles?limit=5';
      const response = await fetch(`${server.url}${path}`, {
        headers: { 'x-api-key': key, 'user-agent': 'Looker/24.6' },
      });
      await response.arrayBuffer();
    }
    await fetch(`${server.url}/nowhere`, { headers: { 'x-api-key': keys[0] ?? '' } });
    // A long API path (a cycle that does not exist: 404, recorded all the same).
    await fetch(`${server.url}${LONG_PATH}`, { headers: { 'x-api-key': keys[0] ?? '' } });
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await signInNewOwner(page, server, 'olivia.owner@initech.example');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('an owner reaches the log from Settings and filters it by key and by action', async () => {
    await page.setViewportSize(DESKTOP);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe(PAGE);
    // Chosen by its name: keys made in the same millisecond may be listed in either order.
    const payroll = page.getByLabel('API key').locator('option', { hasText: 'Payroll sync' });
    await page.getByLabel('API key').selectOption((await payroll.getAttribute('value')) ?? '');
    expect(await page.getByLabel('API key').locator('option:checked').textContent()).toMatch(
      /^Payroll sync \(cpk_/,
    );
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForLoadState('load');
    const byKey = (await page.evaluate(LAYOUT)) as Layout;
    // Its three requests and its creation.
    expect(byKey.rows).toBe(4);
    await page.getByLabel('API key').selectOption('');
    await page.getByLabel('Action').selectOption({ label: 'Key created' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForLoadState('load');
    expect(((await page.evaluate(LAYOUT)) as Layout).rows).toBe(2);
    await screenshot(page, 'audit-log-filtered-1280');
  });

  it('fits a 1280 px desktop as a table and a 390 px phone as blocks, nothing wider than the screen', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}${PAGE}`);
      await page.waitForLoadState('load');
      const shown = (await page.evaluate(LAYOUT)) as Layout;
      expect(shown.pageWidth).toBe(viewport.width);
      expect(shown.rows).toBeGreaterThan(8);
      // The column heads show on a desktop; on a phone each value is labelled instead.
      expect(shown.headVisible).toBe(viewport === DESKTOP);
      await screenshot(page, `audit-log-${viewport.width}`);
    }
    // The entries as a phone shows them, one screen of them.
    await page.locator('#audit-entries-title').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'audit-log-390-entries.png') });
  });

  it('breaks an API path in the Details column at its slashes only at 1280 px, never within a word; on a phone nothing is wider than the screen', async () => {
    await page.setViewportSize(DESKTOP);
    await page.goto(`${server.url}${PAGE}`);
    await page.waitForLoadState('load');
    expect(await page.getByText(`GET ${LONG_PATH}`).count()).toBe(1);
    await screenshot(page, 'audit-log-paths-1280');
    expect(await page.evaluate(SPLIT_PIECES)).toEqual([]);
    expect(((await page.evaluate(LAYOUT)) as Layout).tableFits).toBe(true);
    await page.setViewportSize(PHONE);
    await page.goto(`${server.url}${PAGE}`);
    await page.waitForLoadState('load');
    expect(((await page.evaluate(LAYOUT)) as Layout).pageWidth).toBe(PHONE.width);
    await screenshot(page, 'audit-log-paths-390');
  });
});
