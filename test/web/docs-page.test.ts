// Point 9 of the first-hour issue in a real browser: /docs is compplan's API reference, not
// stock Swagger UI — no "Explore" bar, compplan's name, icon and colours (those of /app), a
// way back to /app, no licence line (the document states none) — and it stays offline: the
// browser asks nothing of any other origin. At 1280 and 390 px, with screenshots.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The browser's own function, for the functions run in the page (the project's TypeScript
// has no DOM library).
declare function getComputedStyle(element: unknown): { backgroundColor: string };

const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];
const BRAND_BLUE = 'rgb(36, 80, 184)';

describe('/docs, the API reference (browser)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const elsewhere: string[] = [];
  const background = (selector: string) =>
    page
      .locator(selector)
      .first()
      .evaluate((element) => getComputedStyle(element).backgroundColor);

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${server.url}/`) && !url.startsWith('data:')) elsewhere.push(url);
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.width} px: compplan's name and colours, a link back to /app, no Explore bar, no licence, nothing from elsewhere`, async () => {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/docs`);
      await page.locator('.swagger-ui .info .title').waitFor();
      await page.locator('.opblock-get').first().waitFor();

      expect(await page.title()).toBe('compplan API reference');
      expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe(
        '/docs/static/theme/compplan.svg',
      );
      // Stock Swagger UI's top bar, with its Explore field, is gone.
      expect(await page.locator('.topbar').count()).toBe(0);
      expect(await page.locator('.download-url-wrapper').count()).toBe(0);
      expect(await page.getByText('Explore', { exact: true }).count()).toBe(0);
      // No licence line: the document states none.
      expect(await page.locator('.info__license').count()).toBe(0);
      expect(await page.locator('body').textContent()).not.toContain('UNLICENSED');

      // compplan's bar: its name leads back to the web application, as does a link.
      const bar = page.locator('header.docs-bar');
      expect(await bar.locator('.brand').textContent()).toBe('cpcompplan');
      expect(await bar.getByRole('link', { name: /compplan/ }).getAttribute('href')).toBe('/app');
      expect(await bar.getByRole('link', { name: 'Web application' }).getAttribute('href')).toBe(
        '/app',
      );
      expect(await bar.locator('.docs-page-name').textContent()).toBe('API reference');

      // The colours of /app: its mark, and the GET operations and Authorize in its blue.
      expect(await background('header.docs-bar')).toBe('rgb(255, 255, 255)');
      expect(await background('header.docs-bar .brand-mark')).toBe(BRAND_BLUE);
      expect(await background('.opblock-get .opblock-summary-method')).toBe(BRAND_BLUE);
      expect(await background('body')).toBe('rgb(245, 247, 250)');
      // Nothing wider than the window.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(viewport.width);
      await screenshot(page, `first-hour-09-docs-${viewport.width}`);

      await page.goto(`${server.url}/app/sign-in`);
      expect(await background('.brand-mark')).toBe(BRAND_BLUE);
      expect(await background('body')).toBe('rgb(245, 247, 250)');
      expect(elsewhere).toEqual([]);
    });
  }

  it('the bar leads back to the web application', async () => {
    await page.setViewportSize(VIEWPORTS[0] ?? { width: 1280, height: 800 });
    await page.goto(`${server.url}/docs`);
    await page.locator('header.docs-bar').waitFor();
    await page.getByRole('link', { name: 'Web application' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/app/sign-in');
    expect(elsewhere).toEqual([]);
  });
});
