// Settings → Users in a real browser (headless Chromium): an owner adds a user and copies
// the one-time password shown once, changes a role, resets a password and removes a user
// after confirming, each said with whose and what; the last owner stays; an administrator
// sees no Users page. Each page fits 390 px and 1280 px, a long email too; screenshots at both widths go to test-results/screenshots/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCredentials } from '../../src/users/repository.js';
import { type Browser, launchBrowser, screenshotsAtBothWidths } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';
import { WebClient, webDataSet } from '../helpers/web-client.js';

const PASSWORD = 'a long enough password';

describe('Settings → Users in the browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  const main = async () => (await page.locator('main').textContent())?.replace(/\s+/g, ' ') ?? '';

  /** Screenshots at 1280 and 390 px; at each, nothing is wider than the window. */
  const screenshots = (name: string) => screenshotsAtBothWidths(page, `users-${name}`);

  async function submit(button: string) {
    await page.getByRole('button', { name: button, exact: true }).click();
    await page.waitForLoadState('load');
  }

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await signInNewOwner(page, server, 'olivia.owner@initech.example');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('adds a user: the one-time password is shown once, copies, and signs the user in', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/app/settings/users');
    await page.getByLabel('Email').fill('adam.admin@initech.example');
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await submit('Add user');
    const password = await page.getByLabel('One-time password', { exact: true }).inputValue();
    expect(password).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/);
    expect(await main()).toContain(
      'No e-mail is sent; give it to adam.admin@initech.example yourself.',
    );
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(password);
    await screenshots('01-added');
    await page.reload();
    expect(await page.getByLabel('One-time password', { exact: true }).count()).toBe(0);
    const adam = new WebClient(server.url);
    await adam.signInFirstTime('adam.admin@initech.example', password, PASSWORD);
    // An administrator has no Users page.
    expect((await adam.get('/app/settings/connections')).body).not.toContain(
      '/app/settings/users"',
    );
    expect((await adam.get('/app/settings/users')).status).toBe(403);
  });

  it('changes a role, and refuses to demote the last owner', async () => {
    await page.getByLabel('Role of adam.admin@initech.example').selectOption('owner');
    await page
      .getByRole('button', { name: 'Change the role of adam.admin@initech.example' })
      .click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('status').first().textContent()).toBe(
      'Role of adam.admin@initech.example changed to Owner.',
    );
    expect(
      (await findCredentials(server.database.db, 'adam.admin@initech.example'))?.user.role,
    ).toBe('owner');
    await page.getByLabel('Role of adam.admin@initech.example').selectOption('admin');
    await page
      .getByRole('button', { name: 'Change the role of adam.admin@initech.example' })
      .click();
    await page.waitForLoadState('load');
    await page.getByLabel('Role of olivia.owner@initech.example').selectOption('admin');
    await page
      .getByRole('button', { name: 'Change the role of olivia.owner@initech.example' })
      .click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe(
      'The last owner cannot be made an administrator: make another user an owner first.',
    );
    await screenshots('02-last-owner');
  });

  it('resets a password after confirming: a new one-time password, shown once', async () => {
    await page.getByRole('link', { name: 'Reset password of adam.admin@initech.example' }).click();
    await page.waitForLoadState('load');
    expect(await main()).toContain('Give adam.admin@initech.example a new one-time password?');
    await screenshots('03-reset-confirm');
    await submit('Reset password');
    const password = await page.getByLabel('One-time password', { exact: true }).inputValue();
    expect(await main()).toContain('New one-time password for adam.admin@initech.example');
    await new WebClient(server.url).signInFirstTime(
      'adam.admin@initech.example',
      password,
      PASSWORD,
    );
  });

  it('removes a user after confirming', async () => {
    await page.getByRole('link', { name: 'Remove adam.admin@initech.example' }).click();
    await page.waitForLoadState('load');
    expect(await main()).toContain('Remove adam.admin@initech.example?');
    await submit('Remove user');
    expect(await page.getByRole('status').first().textContent()).toBe(
      'adam.admin@initech.example removed. Their sessions have ended.',
    );
    expect(await page.locator('.user-list').textContent()).not.toContain(
      'adam.admin@initech.example',
    );
    await screenshots('04-removed');
  });

  it('a long email: the one-time password panel wraps it and fits a phone’s 390 px', async () => {
    const email =
      'christopher.alexander.montgomery-wellington.the-third@initech-international-holdings.example';
    await page.getByLabel('Email').fill(email);
    await submit('Add user');
    expect(await main()).toContain(`One-time password for ${email}`);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      const widths = (await page.evaluate(
        '[document.documentElement.scrollWidth, window.innerWidth]',
      )) as [number, number];
      expect(widths[0]).toBeLessThanOrEqual(widths[1]);
    }
    await screenshots('05-long-email');
  });
});
