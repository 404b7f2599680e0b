// Point 8 of the first-hour issue in a real browser: every page of the web application,
// and GET /, fits a 390 px phone (nothing wider than the screen, the top bar as wide as the
// page), the key table becomes a list there, the curl line under a new key is one line in
// a block that scrolls by itself and copies whole; on a 1280 px desktop a page that fits
// the window does not scroll. Screenshots at both widths.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';
import { webDataSet } from '../helpers/web-client.js';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

// (Browser code as text: the project's TypeScript has no DOM library.)
const LAYOUT = `(() => {
  const root = document.documentElement;
  const bar = document.querySelector('.topbar');
  return {
    pageWidth: root.scrollWidth,
    pageHeight: root.scrollHeight,
    windowWidth: innerWidth,
    windowHeight: innerHeight,
    barWidth: bar ? Math.round(bar.getBoundingClientRect().width) : null,
  };
})()`;

// The browser's own function, for the functions run in the page (the project's TypeScript
// has no DOM library): the computed values this test reads.
declare function getComputedStyle(
  element: unknown,
  pseudoElement?: string,
): {
  display: string;
  position: string;
  content: string;
  whiteSpace: string;
  overflowX: string;
  paddingTop: string;
  paddingBottom: string;
  lineHeight: string;
};

interface Layout {
  pageWidth: number;
  pageHeight: number;
  windowWidth: number;
  windowHeight: number;
  barWidth: number | null;
}

describe('the web application on a phone and a desktop (browser)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const layout = async () => (await page.evaluate(LAYOUT)) as Layout;

  /** Opens `path` at `viewport`, checks it is no wider than the window, saves a screenshot. */
  async function open(path: string, viewport: typeof PHONE, name: string): Promise<Layout> {
    await page.setViewportSize(viewport);
    await page.goto(`${server.url}${path}`);
    await page.waitForLoadState('load');
    const shown = await layout();
    expect({ path, width: shown.pageWidth }).toEqual({ path, width: viewport.width });
    if (shown.barWidth !== null) expect(shown.barWidth).toBe(viewport.width);
    await screenshot(page, `first-hour-${name}-${viewport.width}`);
    return shown;
  }

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('GET / and the sign-in page fit the phone; on the desktop they do not scroll', async () => {
    for (const viewport of [PHONE, DESKTOP]) {
      const home = await open('/', viewport, '03-home');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Compensation Planning API',
      );
      expect(await page.locator('#try-ping').textContent()).toBe(
        `curl -H "x-api-key: cpk_…" ${server.url}/ping`,
      );
      const signIn = await open('/app/sign-in', viewport, '04-sign-in');
      if (viewport === DESKTOP) {
        expect(home.pageHeight).toBe(viewport.height);
        expect(signIn.pageHeight).toBe(viewport.height);
      }
    }
  });

  it('Connections on a phone: a list of keys, a one-line curl block that scrolls inside and copies whole; Revoke and Roles fit too', async () => {
    await page.setViewportSize(PHONE);
    await signInNewOwner(page, server, 'phone.owner@initech.example');
    for (const name of ['Looker export for the finance team (quarterly)', 'HRIS sync']) {
      await createApiKey(server.database.db, { org: 'initech', name });
    }
    await page.getByLabel('Key name').fill('Tableau dashboards');
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');
    const secret = await page.getByLabel('API key', { exact: true }).inputValue();
    const shown = await layout();
    expect(shown.pageWidth).toBe(PHONE.width);
    expect(shown.barWidth).toBe(PHONE.width);
    await screenshot(page, `first-hour-05-connections-new-key-${PHONE.width}`);

    // The curl line: whole, on one line, in a block that scrolls sideways by itself.
    const curl = `curl -H "x-api-key: ${secret}" ${server.url}/ping`;
    const block = await page.locator('#try-new-key').evaluate((pre) => {
      const style = getComputedStyle(pre);
      const inner =
        pre.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
      return {
        text: pre.textContent,
        whiteSpace: style.whiteSpace,
        overflowX: style.overflowX,
        scrolls: pre.scrollWidth > pre.clientWidth,
        lines: Math.round(inner / parseFloat(style.lineHeight)),
        right: pre.getBoundingClientRect().right,
      };
    });
    expect(block).toMatchObject({
      text: curl,
      whiteSpace: 'pre',
      overflowX: 'auto',
      scrolls: true,
      lines: 1,
    });
    expect(block.right).toBeLessThanOrEqual(PHONE.width);
    await page.getByRole('button', { name: 'Copy the command' }).click();
    await page.locator('#try-new-key-status').getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(curl);

    // The key table as a list: one block per key, each value under its column's name.
    const rows = page.locator('table.key-list tbody tr');
    expect(await rows.count()).toBe(3);
    const firstRow = await rows.first().evaluate((row) => {
      const head = row.closest('table')?.querySelector('thead');
      const cell = row.querySelector('td');
      return {
        display: getComputedStyle(row).display,
        header: head ? getComputedStyle(head).position : null,
        label: cell ? getComputedStyle(cell, '::before').content : null,
      };
    });
    expect(firstRow).toEqual({ display: 'block', header: 'absolute', label: '"Reads"' });

    await page.reload();
    await open('/app/settings/connections', PHONE, '06-connections-list');
    await page.getByRole('link', { name: 'Revoke HRIS sync' }).click();
    await page.waitForLoadState('load');
    const revoke = new URL(page.url()).pathname;
    await open(revoke, PHONE, '07-revoke');
    await open('/app/settings/roles', PHONE, '08-roles');
  });

  it('Connections on a desktop: the keys stay a table; a page that fits the window does not scroll', async () => {
    await open('/app/settings/connections', DESKTOP, '06-connections-list');
    const display = await page
      .locator('table.key-list tbody tr')
      .first()
      .evaluate((row) => getComputedStyle(row).display);
    expect(display).toBe('table-row');
    // Roles & Permissions fits a desktop window a little taller than 800 px since it has the
    // manager column too: in one, the page is exactly the window's height, no scroll.
    const TALL_DESKTOP = { width: 1280, height: 1000 };
    const roles = await open('/app/settings/roles', TALL_DESKTOP, '08-roles');
    expect(roles.pageHeight).toBe(TALL_DESKTOP.height);
  });
});
