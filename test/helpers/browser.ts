// Headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core, for the web
// application's browser tests. A fresh profile per browser, nothing downloaded, no
// traffic beyond the loopback server under test (background services are off).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { REPO_ROOT } from './cli.js';

import { CHROMIUM } from './projects.js';
export const SCREENSHOTS = join(REPO_ROOT, 'test-results', 'screenshots');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A browser with a fresh profile, allowed to use the clipboard on `origin`. */
export async function launchBrowser(origin: string): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'compplan-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as test-results/screenshots/NAME.png (a CI artifact). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Screenshots of the page at 1280 px and at 390 px (a phone), NAME-1280.png and
 * NAME-390.png, after checking that at each width nothing is wider than the window.
 */
export async function screenshotsAtBothWidths(page: Page, name: string): Promise<void> {
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    const pageWidth = await page.evaluate('document.documentElement.scrollWidth');
    if (Number(pageWidth) > width)
      throw new Error(`${name} is ${pageWidth} px wide at ${width} px`);
    await screenshot(page, `${name}-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}
