// A user of the web application signed in in a real browser page: made with a one-time
// password (as `compplan users create` does), signed in, own password chosen.
import type { Page } from 'playwright-core';
import type { TestServer } from './server.js';
import { createUser } from './set-up.js';

export async function signInNewOwner(
  page: Page,
  server: TestServer,
  email: string,
  password = 'a long enough password',
  org = 'initech',
): Promise<void> {
  const { oneTimePassword } = await createUser(server.database.db, {
    org,
    email,
    role: 'owner',
  });
  await page.goto(`${server.url}/app/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(oneTimePassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState('load');
  await page.getByLabel('New password', { exact: true }).fill(password);
  await page.getByLabel('Repeat the new password').fill(password);
  await page.getByRole('button', { name: 'Save password' }).click();
  await page.waitForLoadState('load');
  if (new URL(page.url()).pathname !== '/app/settings/connections') {
    throw new Error(`signing in ${email} ended at ${page.url()}`);
  }
}
