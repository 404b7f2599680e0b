// Settings → Connections tells a BI analyst how to connect Excel, Power BI or Tableau
// (docs/web-app.md, "Connections"; docs/bi-tools.md): the OData feed's address on this
// server, to copy, which answers with Basic authentication and a key generated on the same
// page as the password. In a real browser, at a phone's and a desktop's width.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';
import { webDataSet } from '../helpers/web-client.js';

const WIDTHS = [390, 1280];

describe('Connections: the BI tools’ feed address (browser)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the feed address to copy, and the address answers with the key as the Basic password', async () => {
    await signInNewOwner(page, server, 'analyst@initech.example');
    await page.getByLabel('Key name').fill('Power BI');
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');
    const key = await page.getByLabel('API key', { exact: true }).inputValue();

    const panel = page.locator('section[aria-labelledby="bi-tools-title"]');
    expect(await panel.getByRole('heading').textContent()).toBe('Excel, Power BI and Tableau');
    const address = `${server.url}/odata/v4/`;
    expect(await page.locator('#odata-feed').textContent()).toBe(address);
    await page.getByRole('button', { name: 'Copy the feed address' }).click();
    await page.locator('#odata-feed-status').getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(address);

    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      const right = await panel.evaluate((section) => section.getBoundingClientRect().right);
      expect(right).toBeLessThanOrEqual(width);
      await panel.scrollIntoViewIfNeeded();
      await screenshot(page, `connections-bi-tools-${width}`);
    }

    // What the tool then does: the address, any user name, the key as the password.
    const feed = await fetch(address, {
      headers: { authorization: `Basic ${Buffer.from(`analyst:${key}`).toString('base64')}` },
    });
    expect(feed.status).toBe(200);
    const service = (await feed.json()) as { value: { name: string }[] };
    expect(service.value.map((set) => set.name)).toEqual([
      'MeritCycles',
      'Employees',
      'ExchangeRates',
    ]);
  });
});
