// Point 1 of the first-hour issue in a real browser: after Generate API Key the browser is
// redirected (POST/redirect/GET) to Connections, which shows the secret once; reloading
// that page, or going back and forward, creates no second key and shows the secret no
// more. On a desktop (1280 px) and a phone (390 px), with screenshots.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/repository.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';
import { webDataSet } from '../helpers/web-client.js';

const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];

describe('Generate API Key, then reload (browser)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  const keysNamed = async (name: string) => {
    const organization = await findOrganizationBySlug(server.database.db, 'initech');
    return (await listApiKeys(server.database.db, organization?.id ?? '')).filter(
      (key) => key.name === name,
    );
  };

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await signInNewOwner(page, server, 'reload.owner@initech.example');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.width} px: the key is shown once after the redirect; reload, back and forward leave exactly one key`, async () => {
      await page.setViewportSize(viewport);
      const name = `Reload test ${viewport.width}`;
      await page.goto(`${server.url}/app/settings/connections`);
      await page.getByLabel('Key name').fill(name);
      const [post] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Generate API Key' }).click(),
      ]);
      expect(post.status()).toBe(303);
      await page.waitForLoadState('load');
      // The browser's address is the page's own, with no secret in it.
      expect(page.url()).toBe(`${server.url}/app/settings/connections`);
      const secret = await page.getByLabel('API key', { exact: true }).inputValue();
      expect(secret).toMatch(/^cpk_[0-9A-Za-z]{42}$/);
      expect(await page.locator('#try-new-key').textContent()).toBe(
        `curl -H "x-api-key: ${secret}" ${server.url}/ping`,
      );
      await screenshot(page, `first-hour-01-generated-${viewport.width}`);

      await page.reload();
      await page.waitForLoadState('load');
      expect(page.url()).toBe(`${server.url}/app/settings/connections`);
      expect(await page.locator('#new-key-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(secret.slice(12));
      expect(await keysNamed(name)).toHaveLength(1);
      await screenshot(page, `first-hour-02-reloaded-${viewport.width}`);

      await page.goBack();
      await page.waitForLoadState('load');
      await page.goForward();
      await page.waitForLoadState('load');
      expect(await page.content()).not.toContain(secret.slice(12));
      expect(await keysNamed(name)).toHaveLength(1);
      expect((await fetch(`${server.url}/ping`, { headers: { 'x-api-key': secret } })).status).toBe(
        200,
      );
    });
  }
});
