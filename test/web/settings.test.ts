// The web application in a real browser (headless Chromium): an owner made with the CLI
// signs in, chooses a password, generates an API key, uses it, revokes it; the owner
// turns the administrators' permission off; an administrator then cannot generate a key,
// neither through the page nor by posting the form directly. Screenshots of every page
// go to test-results/screenshots/.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/repository.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { runCli, stopAllProcesses } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { webDataSet } from '../helpers/web-client.js';

const OWNER = 'olivia.owner@initech.example';
const ADMIN = 'adam.admin@initech.example';
const OWNER_PASSWORD = 'owner chooses a long password';
const ADMIN_PASSWORD = 'admin chooses a long password';
const SECRET = /^cpk_[0-9A-Za-z]{42}$/;

describe('Settings in the browser', () => {
  let database: TestDatabase;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let cliEnv: Record<string, string>;
  let ownerOneTimePassword: string;
  let adminOneTimePassword: string;
  let generatedKey: string;

  const ping = (key: string) => fetch(`${server.url}/ping`, { headers: { 'x-api-key': key } });
  const keysOfInitech = async () => {
    const organization = await findOrganizationBySlug(server.database.db, 'initech');
    return listApiKeys(server.database.db, organization?.id ?? '');
  };

  async function signIn(email: string, password: string) {
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
  }

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    if (database.config.dialect !== 'sqlite') throw new Error('sqlite expected');
    cliEnv = { DATABASE_URL: `sqlite:${database.config.path}`, LOG_LEVEL: 'warn' };
    server = await startTestServer({
      database: database.config,
      dataSets: [webDataSet('initech')],
    });

    // The owner is made as the README says: with the command line, which prints a
    // one-time password once.
    const created = await runCli(
      ['users', 'create', '--org', 'initech', '--email', OWNER, '--role', 'owner'],
      { env: cliEnv },
    );
    expect(created.code).toBe(0);
    const match = /\nOne-time password:\n\n {2}(\S+)\n/.exec(created.stdout);
    ownerOneTimePassword = match?.[1] ?? '';
    expect(ownerOneTimePassword).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}-[a-z2-9]{5}-[a-z2-9]{5}$/);
    adminOneTimePassword = (
      await createUser(server.database.db, { org: 'initech', email: ADMIN, role: 'admin' })
    ).oneTimePassword;

    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await database?.drop();
    await stopAllProcesses();
  });

  it('shows a labelled sign-in form that works from the keyboard, with a visible focus ring', async () => {
    await page.goto(`${server.url}/app/settings/connections`);
    expect(new URL(page.url()).pathname).toBe('/app/sign-in');
    expect(await page.title()).toBe('Sign in · compplan');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    await screenshot(page, '01-sign-in');

    // Keyboard only: the email field has focus, Tab moves to the password, then the button.
    const focused = () => page.locator(':focus').getAttribute('id');
    expect(await focused()).toBe('email');
    await page.keyboard.type(OWNER);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('password');
    await page.keyboard.type('a wrong password');
    await page.keyboard.press('Tab');
    // (Browser code as text: the project's TypeScript has no DOM library.)
    const outline = await page.evaluate(`(() => {
      const style = getComputedStyle(document.activeElement);
      return { text: document.activeElement.textContent, outline: style.outlineStyle + ' ' + style.outlineWidth };
    })()`);
    expect(outline).toEqual({ text: 'Sign in', outline: 'solid 3px' });
    await page.keyboard.press('Enter');
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe(
      'The email or the password is not right.',
    );
    // The email is kept; the password is not.
    expect(await page.getByLabel('Email').inputValue()).toBe(OWNER);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    await screenshot(page, '02-sign-in-error');
  });

  it('the owner signs in with the one-time password and must choose a password first', async () => {
    await signIn(OWNER, ownerOneTimePassword);
    expect(new URL(page.url()).pathname).toBe('/app/password');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Choose your password',
    );
    await screenshot(page, '03-choose-password');

    await page.getByLabel('New password', { exact: true }).fill('too short');
    await page.getByLabel('Repeat the new password').fill('too short');
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe('Use at least 12 characters.');

    await page.getByLabel('New password', { exact: true }).fill(OWNER_PASSWORD);
    await page.getByLabel('Repeat the new password').fill(OWNER_PASSWORD);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/app/settings/connections');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Connections');
    expect(await page.getByRole('link', { name: 'Connections' }).getAttribute('aria-current')).toBe(
      'page',
    );
    expect(await page.getByText('No API keys yet.').count()).toBe(1);
    await screenshot(page, '04-connections-empty');
  });

  it('generates an API key shown once with a copy button and a warning; the key answers /ping', async () => {
    await page.getByLabel('Key name').fill('Looker export');
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');

    const secretField = page.getByLabel('API key', { exact: true });
    generatedKey = await secretField.inputValue();
    expect(generatedKey).toMatch(SECRET);
    expect(
      await page.getByRole('heading', { name: 'Your new API key “Looker export”' }).count(),
    ).toBe(1);
    expect(await page.locator('#new-key-warning').textContent()).toBe(
      'Copy this key now. For your security it cannot be shown again: if you lose it, generate a new key and revoke this one.',
    );
    await screenshot(page, '05-key-generated');

    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(generatedKey);
    expect(await page.getByRole('button', { name: 'Copied' }).count()).toBe(1);

    const response = await ping(generatedKey);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ message: 'pong' });

    // Shown once: the list (and any later page) has only the 12-character prefix.
    await page.goto(`${server.url}/app/settings/connections`);
    const html = await page.content();
    expect(html).not.toContain(generatedKey);
    expect(html).not.toContain(generatedKey.slice(12));
    const row = page.getByRole('row', { name: /Looker export/ });
    // The name cell: the name, the prefix and when it was created.
    expect(await row.locator('th').textContent()).toMatch(
      new RegExp(
        `^Looker export ${generatedKey.slice(0, 12)}… Created \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`,
      ),
    );
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toBe('All merit cycles No hidden columns From any address');
    // Last used: the /ping just made, and from where.
    expect(cells[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC from 127\.0\.0\.1$/);
    expect(cells[2]).toBe('Active Never expires');
    await screenshot(page, '06-connections-list');
  });

  it('revokes the key after a confirmation step; the key gets 401 within 5 seconds', async () => {
    await page.getByRole('link', { name: 'Revoke Looker export' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe(
      'Revoke “Looker export”?',
    );
    await screenshot(page, '07-revoke-confirm');

    // Cancel changes nothing.
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.waitForLoadState('load');
    expect((await keysOfInitech()).map((key) => key.revokedAt)).toEqual([null]);

    await page.getByRole('link', { name: 'Revoke Looker export' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForLoadState('load');
    const revokedAt = Date.now();
    expect(new URL(page.url()).pathname).toBe('/app/settings/connections');
    expect(await page.getByRole('status').first().textContent()).toBe(
      `Revoked “Looker export” (${generatedKey.slice(0, 12)}…). Requests with it are refused within 5 seconds.`,
    );
    const status = await page
      .getByRole('row', { name: /Looker export/ })
      .locator('td')
      .nth(2)
      .textContent();
    expect(status).toMatch(/^Revoked \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    await screenshot(page, '08-connections-revoked');

    let answer = 200;
    while (Date.now() - revokedAt < 5_000) {
      answer = (await ping(generatedKey)).status;
      if (answer === 401) break;
      await sleep(200);
    }
    expect(answer).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
  });

  it('the owner turns off "Allow administrators to generate API keys"; the CLI sees the same setting', async () => {
    await page.getByRole('link', { name: 'Roles & Permissions' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Roles & Permissions');
    const toggle = page.getByLabel('Allow administrators to generate API keys');
    expect(await toggle.isChecked()).toBe(true);
    await screenshot(page, '09-roles-owner');

    await toggle.uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('status').textContent()).toBe(
      'Saved: no one can generate API keys for Initech Corp, owners included. Keys already generated keep working until they are revoked.',
    );
    expect(await page.getByLabel('Allow administrators to generate API keys').isChecked()).toBe(
      false,
    );
    const listed = await runCli(['orgs', 'list', '--json'], { env: cliEnv });
    expect(JSON.parse(listed.stdout)).toMatchObject([{ slug: 'initech', apiKeysEnabled: false }]);
    await screenshot(page, '10-roles-saved');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/app/sign-in');
    expect(await page.getByRole('status').textContent()).toBe('You are signed out.');
  });

  it('an administrator sees Generate disabled with the reason, and cannot change the permission', async () => {
    await signIn(ADMIN, adminOneTimePassword);
    await page.getByLabel('New password', { exact: true }).fill(ADMIN_PASSWORD);
    await page.getByLabel('Repeat the new password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/app/settings/connections');

    const generate = page.getByRole('button', { name: 'Generate API Key' });
    expect(await generate.isDisabled()).toBe(true);
    expect(await page.getByLabel('Key name').isDisabled()).toBe(true);
    expect(await page.locator('#generate-blocked').textContent()).toBe(
      'Generating API keys is turned off for Initech Corp. An owner can allow administrators to generate API keys under Roles & Permissions.',
    );
    await screenshot(page, '11-connections-admin-disabled');

    await page.getByRole('link', { name: 'Roles & Permissions' }).first().click();
    await page.waitForLoadState('load');
    expect(await page.getByLabel('Allow administrators to generate API keys').isDisabled()).toBe(
      true,
    );
    expect(await page.getByText('Only an owner can change permissions.').count()).toBe(1);
    await screenshot(page, '12-roles-admin');
  });

  it('the server refuses the administrator a key through the page and by direct posts with a valid session and CSRF token (403)', async () => {
    await page.goto(`${server.url}/app/settings/connections`);
    // Through the page: re-enable the disabled form in the DOM and submit it.
    await page
      .locator('form[action="/app/settings/connections/keys"] fieldset')
      .evaluate((fieldset) => fieldset.removeAttribute('disabled'));
    await page.getByLabel('Key name').fill('Sneaky key');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/app/settings/connections/keys')),
      page.getByRole('button', { name: 'Generate API Key' }).click(),
    ]);
    expect(response.status()).toBe(403);
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe(
      'No API key was generated: the organisation does not allow generating API keys.',
    );
    expect(await page.locator('#new-key-secret').count()).toBe(0);
    await screenshot(page, '13-connections-admin-refused');

    // Directly: a form post from the page's own session with its valid CSRF token.
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const direct = await page.evaluate(
      async ({ token }) => {
        const post = (path: string, fields: Record<string, string>) =>
          fetch(path, {
            method: 'POST',
            body: new URLSearchParams({ _csrf: token, ...fields }),
            redirect: 'manual',
          }).then((r) => r.status);
        return {
          generate: await post('/app/settings/connections/keys', { name: 'Direct post' }),
          permission: await post('/app/settings/roles', {
            allowAdministratorsToGenerateApiKeys: 'on',
          }),
        };
      },
      { token: csrf },
    );
    expect(direct).toEqual({ generate: 403, permission: 403 });
    // Nothing was created, and the setting is still off.
    expect((await keysOfInitech()).map((key) => key.name)).toEqual(['Looker export']);
    expect((await findOrganizationBySlug(server.database.db, 'initech'))?.apiKeysEnabled).toBe(
      false,
    );
  });

  it('once the owner allows it again (here with the CLI), the administrator generates a key that works', async () => {
    const enabled = await runCli(['orgs', 'set', 'initech', '--api-keys', 'enabled'], {
      env: cliEnv,
    });
    expect(enabled.code).toBe(0);
    await page.goto(`${server.url}/app/settings/connections`);
    expect(await page.getByRole('button', { name: 'Generate API Key' }).isDisabled()).toBe(false);
    await page.getByLabel('Key name').fill('Admin <b>key</b>');
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.waitForLoadState('load');
    const key = await page.getByLabel('API key', { exact: true }).inputValue();
    expect(key).toMatch(SECRET);
    // The name is shown as text, never as markup.
    expect(await page.getByRole('heading', { level: 2 }).first().textContent()).toBe(
      'Your new API key “Admin <b>key</b>”',
    );
    expect((await ping(key)).status).toBe(200);
  });
});
