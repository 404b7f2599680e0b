// Settings → Connections in a real browser (headless Chromium): an owner generates a key
// that reads one merit cycle, without two columns ticked in the picker, expiring in 90
// days; the list shows all of it; the owner rolls the key with a grace period, and both
// secrets work. A form with a problem says so and generates nothing. Screenshots at 1280 and 390 px wide go to
// test-results/screenshots/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/repository.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { EDGE_CYCLE, PROTO_CYCLE, UMBRELLA, umbrellaDataSet } from '../fixtures/api-data-sets.js';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { stopAllProcesses } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';

const OWNER = 'uma.owner@umbrella.example';
const PASSWORD = 'owner chooses a long password';
const SECRET = /^cpk_[0-9A-Za-z]{42}$/;
const LIST = '/v1/compensationPlanning/meritCycles';
const DAY = 86_400_000;

describe('least-privilege keys in the browser', () => {
  let database: TestDatabase;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let firstSecret: string;

  const get = (path: string, key: string) =>
    fetch(`${server.url}${path}`, { headers: { 'x-api-key': key } });
  const keysOfUmbrella = async () => {
    const organization = await findOrganizationBySlug(server.database.db, UMBRELLA);
    return listApiKeys(server.database.db, organization?.id ?? '');
  };
  /** Screenshots of the page as it is, wide and narrow. */
  async function screenshots(name: string) {
    await screenshot(page, `keys-${name}-1280`);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, `keys-${name}-390`);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    server = await startTestServer({ database: database.config, dataSets: [umbrellaDataSet()] });
    const { oneTimePassword } = await createUser(server.database.db, {
      org: UMBRELLA,
      email: OWNER,
      role: 'owner',
    });
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByLabel('Email').fill(OWNER);
    await page.getByLabel('Password').fill(oneTimePassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the new password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/app/settings/connections');
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await database?.drop();
    await stopAllProcesses();
  });

  it('offers the organisation’s merit cycles and its columns to tick', async () => {
    expect(await page.getByLabel('Edge Names').count()).toBe(1);
    expect(await page.getByLabel('Prototype Keys').count()).toBe(1);
    for (const key of ['department', 'employee', '__proto__', 'quoting']) {
      expect(await page.locator(`input[name="column:${key}"]`).count()).toBe(1);
    }
    await screenshots('01-generate-form');
  });

  it('a scope with no merit cycle ticked is refused with the form’s message, and nothing is generated', async () => {
    await page.getByLabel('Key name').fill('Empty scope');
    await page.getByLabel('Only these:').check();
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/app/settings/connections/keys')),
      page.getByRole('button', { name: 'Generate API Key' }).click(),
    ]);
    expect(response.status()).toBe(422);
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe(
      'Merit cycles needs at least one merit cycle id (or choose every merit cycle)',
    );
    expect(await page.locator('#new-key-secret').count()).toBe(0);
    expect(await keysOfUmbrella()).toEqual([]);
    await screenshots('02-generate-refused');
  });

  it('generates a key that reads one cycle without two columns and expires in 90 days; the list shows it', async () => {
    await page.getByLabel('Key name').fill('Dashboard');
    await page.getByLabel('Only these:').check();
    await page.getByLabel('Edge Names').check();
    await page.locator('input[name="column:department"]').check();
    await page.locator('input[name="column:quoting"]').check();
    await page.getByLabel('Expires', { exact: true }).selectOption('90d');
    const before = Date.now();
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');
    firstSecret = await page.getByLabel('API key', { exact: true }).inputValue();
    expect(firstSecret).toMatch(SECRET);
    await screenshots('03-generated');

    const cycles = (await (await get(LIST, firstSecret)).json()) as { data: { id: string }[] };
    expect(cycles.data.map((c) => c.id)).toEqual([EDGE_CYCLE]);
    expect((await get(`${LIST}/${PROTO_CYCLE}`, firstSecret)).status).toBe(404);
    const employees = (await (
      await get(`${LIST}/${EDGE_CYCLE}/employees?limit=100`, firstSecret)
    ).json()) as {
      data: { columns: Record<string, unknown> }[];
    };
    for (const employee of employees.data) {
      expect(Object.keys(employee.columns)).not.toContain('department');
      expect(Object.keys(employee.columns)).not.toContain('quoting');
    }

    const [stored] = await keysOfUmbrella();
    expect(stored).toMatchObject({
      name: 'Dashboard',
      cycles: [EDGE_CYCLE],
      hiddenColumns: ['department', 'quoting'],
    });
    expect(Date.parse(stored?.expiresAt ?? '')).toBeGreaterThanOrEqual(before + 90 * DAY);

    await page.goto(`${server.url}/app/settings/connections`);
    const cells = await page
      .getByRole('row', { name: /Dashboard/ })
      .locator('td')
      .allTextContents();
    expect(cells[0]).toBe('Edge Names Hides department, quoting From any address');
    expect(cells[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC from 127\.0\.0\.1$/);
    expect(cells[2]).toMatch(/^Active Expires \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    await screenshots('04-list');
  });

  it('ticking a merit cycle chooses “Only these”: the key reads that cycle only; choosing every cycle clears the ticks', async () => {
    await page.getByLabel('Key name').fill('Ticked only');
    expect(await page.getByLabel('Every merit cycle, also those added later').isChecked()).toBe(
      true,
    );
    await page.getByLabel('Prototype Keys').check();
    expect(await page.getByLabel('Only these:').isChecked()).toBe(true);
    await page.getByLabel('Every merit cycle, also those added later').check();
    expect(await page.getByLabel('Prototype Keys').isChecked()).toBe(false);
    await page.getByLabel('Edge Names').check();
    expect(await page.getByLabel('Only these:').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByLabel('API key', { exact: true }).inputValue()).toMatch(SECRET);
    const made = (await keysOfUmbrella()).find((key) => key.name === 'Ticked only');
    expect(made?.cycles).toEqual([EDGE_CYCLE]);
  });

  it('a key that expires within 7 days is flagged in the list', async () => {
    await page.getByLabel('Key name').fill('Trial');
    await page.getByLabel('Expires', { exact: true }).selectOption('7d');
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');
    await page.goto(`${server.url}/app/settings/connections`);
    const cells = await page.getByRole('row', { name: /Trial/ }).locator('td').allTextContents();
    expect(cells[0]).toBe('All merit cycles No hidden columns From any address');
    expect(cells[2]).toMatch(/^Active Expires \d{4}-\d\d-\d\d \d\d:\d\d UTC Expires soon$/);
    const dashboard = await page
      .getByRole('row', { name: /Dashboard/ })
      .locator('td')
      .allTextContents();
    expect(dashboard[2]).not.toContain('Expires soon');
  });

  it('rolls the key with a grace period: a new secret shown once, the same scope, and the old secret still works', async () => {
    await page.getByRole('link', { name: 'Roll Dashboard' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Roll “Dashboard”');
    await page.getByLabel('Old secret keeps working for').selectOption('7d');
    await screenshots('05-roll');
    const before = Date.now();
    await page.getByRole('button', { name: 'Roll key' }).click();
    await page.waitForLoadState('load');
    const rolled = await page.getByLabel('API key', { exact: true }).inputValue();
    expect(rolled).toMatch(SECRET);
    expect(rolled).not.toBe(firstSecret);
    expect(await page.getByRole('status').first().textContent()).toMatch(
      /^Rolled “Dashboard”: the old secret keeps working until \d{4}-\d\d-\d\d \d\d:\d\d UTC, then gets 401\.$/,
    );
    await screenshots('06-rolled');

    const [stored] = (await keysOfUmbrella()).filter((key) => key.name === 'Dashboard');
    expect(stored?.prefix).toBe(rolled.slice(0, 12));
    expect(Date.parse(stored?.previousSecretExpiresAt ?? '')).toBeGreaterThanOrEqual(
      before + 7 * DAY,
    );
    await server.app.apiKeys.confirm();
    for (const secret of [firstSecret, rolled]) {
      const cycles = (await (await get(LIST, secret)).json()) as { data: { id: string }[] };
      expect(cycles.data.map((c) => c.id)).toEqual([EDGE_CYCLE]);
    }
  });
});
