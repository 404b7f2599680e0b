// Issue #44 replayed in a real browser (headless Chromium), at 1280 and at 390 px: an owner
// names a key, ticks one merit cycle and two columns, hides a type, chooses 90 days and
// types `10.20.0.*; 127.0.0.1`, and presses Generate. The refusal says what the address
// field takes and keeps every choice; the owner corrects the address only and presses
// Generate again: the key is exactly as chosen (listApiKeys), and the new-key box says so.
// Screenshots go to test-results/screenshots/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/repository.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { PAY_CYCLES, payColumnsDataSet } from '../fixtures/pay-columns-data-set.js';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';

const ORG = 'paymasters';
const PASSWORD = 'owner chooses a long password';
const DAY = 86_400_000;
const WIDTHS = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
];

// (Browser code as text: the project's TypeScript has no DOM library.)
const CHOICES = `(() => {
  const form = document.querySelector('form[action="/app/settings/connections/keys"]');
  return {
    name: form.querySelector('#key-name').value,
    scope: form.querySelector('input[name="scope"]:checked').value,
    ticked: [...form.querySelectorAll('input[type="checkbox"]:checked')].map((box) => box.name),
    otherColumns: form.querySelector('#other-columns').value,
    expiresIn: form.querySelector('#expires-in').value,
    expiresAt: form.querySelector('#expires-at').value,
    allowIps: form.querySelector('#allow-ips').value,
    pageWidth: document.documentElement.scrollWidth,
  };
})()`;

describe('a refused key form keeps every choice, and the key is made as chosen', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [payColumnsDataSet(ORG)] });
    browser = await launchBrowser(server.url);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const viewport of WIDTHS) {
    it(`at ${viewport.width} px: refused for the address with every choice kept; corrected, it makes exactly that key`, async () => {
      const email = `owner${viewport.width}@pay.example`;
      const name = `Finance BI ${viewport.width}`;
      // Each width signs in its own owner, from a browser that holds no session.
      await browser.context.clearCookies();
      page = await browser.context.newPage();
      await page.setViewportSize(viewport);
      await signInNewOwner(page, server, email, PASSWORD, ORG);

      await page.getByLabel('Key name').fill(name);
      await page.getByLabel('2026 Annual Merit').check();
      await page.getByLabel('Base Pay basePay').check();
      await page.getByLabel('Annual Bonus annualBonus').check();
      await page.getByLabel('number', { exact: true }).check();
      await page.getByLabel('Expires', { exact: true }).selectOption('90d');
      await page.getByLabel('Allowed addresses').fill('10.20.0.*; 127.0.0.1');
      const chosen = {
        name,
        scope: 'some',
        ticked: [
          `cycle:${PAY_CYCLES.annual}`,
          'column:annualBonus',
          'column:basePay',
          'columnType:number',
        ],
        otherColumns: '',
        expiresIn: '90d',
        expiresAt: '',
        allowIps: '10.20.0.*; 127.0.0.1',
        pageWidth: viewport.width,
      };
      expect(await page.evaluate(CHOICES)).toEqual(chosen);
      await screenshot(page, `key-form-01-chosen-${viewport.width}`);

      const [refused] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/app/settings/connections/keys')),
        page.getByRole('button', { name: 'Generate API Key' }).click(),
      ]);
      expect(refused.status()).toBe(422);
      await page.waitForLoadState('load');
      expect(await page.getByRole('alert').textContent()).toBe(
        'Allowed addresses: “10.20.0.*” has a wildcard (*), which this field does not take: write the range as 10.20.0.0/24 (CIDR). Separate addresses with commas or new lines, not semicolons. It takes single addresses, such as 127.0.0.1 or 2001:db8::1, and CIDR ranges, such as 10.20.0.0/24, separated by commas or new lines.',
      );
      expect(await page.evaluate(CHOICES)).toEqual(chosen);
      expect(await page.locator('#new-key-secret').count()).toBe(0);
      await screenshot(page, `key-form-02-refused-${viewport.width}`);

      await page.getByLabel('Allowed addresses').fill('10.20.0.0/24\n127.0.0.1');
      const before = Date.now();
      await page.getByRole('button', { name: 'Generate API Key' }).click();
      await page.waitForLoadState('load');
      expect(await page.getByLabel('API key', { exact: true }).inputValue()).toMatch(
        /^cpk_[0-9A-Za-z]{42}$/,
      );
      const organization = await findOrganizationBySlug(server.database.db, ORG);
      const key = (await listApiKeys(server.database.db, organization?.id ?? '')).find(
        (k) => k.name === name,
      );
      expect(key).toMatchObject({
        cycles: [PAY_CYCLES.annual],
        hiddenColumns: ['annualBonus', 'basePay'],
        hiddenColumnTypes: ['number'],
        allowedAddresses: ['10.20.0.0/24', '127.0.0.1'],
      });
      const expires = Date.parse(key?.expiresAt ?? '');
      expect(expires).toBeGreaterThanOrEqual(before + 90 * DAY);
      expect(expires).toBeLessThanOrEqual(Date.now() + 90 * DAY);
      const at = key?.expiresAt ?? '';
      const facts = page.getByLabel('What the new key reads');
      expect(await facts.locator('dt').allTextContents()).toEqual([
        'Merit cycles',
        'Hidden columns',
        'Hidden types',
        'Employees',
        'Expires',
        'Allowed addresses',
      ]);
      expect(await facts.locator('dd').allTextContents()).toEqual([
        '2026 Annual Merit',
        'annualBonus, basePay',
        'number',
        'Every employee',
        `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`,
        '10.20.0.0/24, 127.0.0.1',
      ]);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(viewport.width);
      await screenshot(page, `key-form-03-generated-${viewport.width}`);
      await page.close();
    });
  }
});
