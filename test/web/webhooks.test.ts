// Settings → Connections → Webhooks in a real browser (headless Chromium): an owner adds
// an endpoint, copies its signing secret (shown once), sends a test ping that a real
// receiver on loopback verifies with the copied secret, sees an import's event arrive and
// the deliveries listed, and removes the endpoint after confirming. A private address is
// refused with its reason. Screenshots at 1280 and 390 px go to test-results/screenshots/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { scaledSchedule, startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';
import { webDataSet } from '../helpers/web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

describe('webhooks in the browser', () => {
  let database: TestDatabase;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let receiver: WebhookReceiver;

  async function screenshots(name: string) {
    await screenshot(page, `webhooks-${name}-1280`);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, `webhooks-${name}-390`);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  /** Reloads the page until `text` shows (deliveries happen in the background). */
  async function reloadUntil(text: string) {
    for (let tries = 0; tries < 100; tries++) {
      const shown = (await page.locator('main').textContent())?.replace(/\s+/g, ' ');
      if (shown?.includes(text)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
      await page.reload();
    }
    throw new Error(`"${text}" never showed`);
  }

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    server = await startTestServer({
      database: database.config,
      dataSets: [webDataSet('initech')],
      webhooks: { allowPrivateNetworks: ['127.0.0.0/8'] },
      webhookSchedule: scaledSchedule(0.001),
    });
    receiver = await startWebhookReceiver();
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await signInNewOwner(page, server, 'olivia.owner@initech.example');
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.close();
    await database?.drop();
  });

  it('is under Settings, and refuses a private address with the reason', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/app/settings/connections/webhooks');
    expect(await page.getByText('No webhook endpoints yet.').count()).toBe(1);
    await page.getByLabel('Endpoint URL').fill('http://10.0.0.1/hooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe(
      'Refused webhook URL: 10.0.0.1 is not a public address (private); ask whoever runs this compplan server to allow private addresses for webhooks',
    );
    await screenshots('01-refused');
  });

  it('adds an endpoint and shows its secret once, to copy', async () => {
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('meritCycle.removed').uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForLoadState('load');
    const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    receiver.secret = String(await page.evaluate('navigator.clipboard.readText()'));
    expect(receiver.secret).toBe(secret);
    await screenshots('02-added');
    await page.reload();
    expect(await page.getByLabel('Signing secret', { exact: true }).count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
  });

  it('sends a test ping and an import’s events, verified by the receiver, and lists the deliveries', async () => {
    await page.getByRole('button', { name: /^Send test ping/ }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('status').first().textContent()).toContain('A ping is on its way');
    const [ping] = await receiver.waitFor(1);
    expect(ping).toMatchObject({ verified: true, body: { type: 'ping' } });

    const changed = webDataSet('initech');
    const [cycle] = changed.meritCycles;
    if (cycle) cycle.status = 'finalized';
    await server.load(changed);
    const [, updated] = await receiver.waitFor(2);
    expect(updated).toMatchObject({ verified: true, body: { type: 'meritCycle.updated' } });
    await reloadUntil('meritCycle.updated Delivered (HTTP 204)');
    expect(await page.locator('.delivery-list tbody tr').count()).toBe(2);
    await screenshots('03-deliveries');
  });

  it('removes the endpoint after a confirmation', async () => {
    await page.getByRole('link', { name: /^Remove/ }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('heading', { name: `Remove ${receiver.url}?` }).count()).toBe(1);
    await screenshots('04-remove-confirmation');
    await page.getByRole('button', { name: 'Remove endpoint' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('status').first().textContent()).toBe(
      'Removed the endpoint. Nothing more is sent to it.',
    );
    expect(await page.getByText('No webhook endpoints yet.').count()).toBe(1);
    await screenshots('05-removed');
  });
});
