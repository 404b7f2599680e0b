#!/usr/bin/env node
// npm run docs:screenshot [-- OUT.png]: starts `compplan serve --demo` on a throwaway
// database, opens /docs in Debian's headless Chromium (apt-get install chromium), enters
// the demo key under Authorize, tries GET /ping and the merit cycle list from the page,
// and saves a screenshot. Then signs in to the web application as a new owner (made with
// `compplan users create`), generates a key and saves Settings → Connections with the
// BI tools' feed address (OUT-connections.png; docs/images/bi-tools-connections.png is
// one). Fails when any request of the pages leaves 127.0.0.1 (they must work offline) or
// when try-it-out does not get a 200. Not part of npm test.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = process.argv[2] ?? join(tmpdir(), 'compplan-docs.png');
const dir = mkdtempSync(join(tmpdir(), 'compplan-docs-'));

const server = spawn(
  process.execPath,
  [join(root, 'bin', 'compplan.js'), 'serve', '--demo', '--port', '0', '--host', '127.0.0.1'],
  {
    env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'docs.db')}`, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
const stopServer = () =>
  new Promise((resolve) => {
    if (server.exitCode !== null) return resolve(undefined);
    const kill = setTimeout(() => server.kill('SIGKILL'), 5_000);
    server.once('exit', () => {
      clearTimeout(kill);
      resolve(undefined);
    });
    server.kill('SIGTERM');
  });

let browser;
try {
  const { url, key } = await new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 30_000);
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      text += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
      const key = /\b(cpk_[0-9A-Za-z]{42})\b/.exec(text)?.[1];
      if (url && key) {
        clearTimeout(timer);
        resolve({ url, key });
      }
    });
    server.once('exit', (code) => reject(new Error(`server exited (${code}): ${text}`)));
  });

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(`${url}/docs`, { waitUntil: 'networkidle' });
  await page.waitForSelector('.opblock-summary');

  // Authorize with the key, as a new user would.
  await page.click('.btn.authorize');
  await page.fill('.auth-container input[type=text]', key);
  await page.click('.auth-btn-wrapper .btn.modal-btn.auth.authorize');
  await page.click('.auth-btn-wrapper .btn-done');

  const tryOut = async (operation) => {
    const block = page.locator(`#operations-${operation}`);
    await block.locator('.opblock-summary').first().click();
    const tryButton = block.locator('.try-out__btn');
    if ((await tryButton.textContent())?.includes('Try it out')) await tryButton.click();
    await block.locator('.execute').click();
    const status = block.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    return (await status.textContent())?.trim();
  };
  const statuses = {
    ping: await tryOut('Ping-ping'),
    listMeritCycles: await tryOut('Merit_cycles-listMeritCycles'),
  };
  // What try-it-out got for /ping: the curl line, the live response and its headers.
  const tried = out.replace(/\.png$/, '-ping.png');
  await page
    .locator('#operations-Ping-ping .responses-inner > div')
    .first()
    .screenshot({ path: tried });
  await page.locator('#operations-Ping-ping .opblock-summary').first().click();
  await page.locator('#operations-Merit_cycles-listMeritCycles .opblock-summary').first().click();
  await page.screenshot({ path: out, fullPage: false });

  // Settings → Connections, as an owner who has just generated a key for Power BI.
  const { oneTimePassword } = JSON.parse(
    execFileSync(
      process.execPath,
      [
        join(root, 'bin', 'compplan.js'),
        'users',
        'create',
        '--org',
        'demo',
        '--email',
        'analyst@demo.example',
        '--role',
        'owner',
        '--json',
      ],
      { env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'docs.db')}` } },
    ).toString(),
  );
  const password = 'a long enough password';
  await page.goto(`${url}/app/sign-in`);
  await page.getByLabel('Email').fill('analyst@demo.example');
  await page.getByLabel('Password').fill(oneTimePassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('New password', { exact: true }).fill(password);
  await page.getByLabel('Repeat the new password').fill(password);
  await page.getByRole('button', { name: 'Save password' }).click();
  await page.getByLabel('Key name').fill('Power BI');
  await page.getByRole('button', { name: 'Generate API Key' }).click();
  const connections = out.replace(/\.png$/, '-connections.png');
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.locator('section[aria-labelledby="bi-tools-title"]').screenshot({ path: connections });

  const outside = requests.filter((address) => new URL(address).hostname !== '127.0.0.1');
  console.log(
    JSON.stringify(
      { screenshots: [out, tried, connections], requests: requests.length, outside, statuses },
      null,
      2,
    ),
  );
  if (outside.length > 0) process.exitCode = 1;
  if (Object.values(statuses).some((status) => status !== '200')) process.exitCode = 1;
} finally {
  await browser?.close();
  await stopServer();
  rmSync(dir, { recursive: true, force: true });
}
