// Settings → Connections and → Webhooks as full as they get, in a real browser: several keys
// with long names, cycle scopes, hidden columns, expiry and an IPv6 last-used address, and
// an endpoint with deliveries. At 1280 px and at 390 px every table fits inside its panel
// and the window (Roll and Revoke in view, nothing scrolled or clipped sideways), and on
// the desktop the key table's column headings stay on one line. Screenshots at both widths.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { addWebhookEndpoint, testWebhookEndpoint } from '../../src/webhooks/service.js';
import { type Browser, launchBrowser, screenshot } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signInNewOwner } from '../helpers/web-browser-session.js';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const FINANCE = 'mc_0b6f0d55-3a51-4f38-9a39-5d0c1f1b7a01';
const ENGINEERING = 'mc_0b6f0d55-3a51-4f38-9a39-5d0c1f1b7a02';

function dataSet(): DataSetInput {
  const cycle = (id: string, name: string) => ({
    id,
    name,
    status: 'active' as const,
    startDate: '2026-01-01T00:00:00.000Z',
    endDate: '2026-03-31T23:59:59.999Z',
    currency: 'USD',
  });
  return {
    organization: { slug: 'initech', name: 'Initech Corp', apiKeysEnabled: true },
    meritCycles: [
      cycle(FINANCE, '2026 Annual Merit – Finance and Accounting (EMEA)'),
      cycle(ENGINEERING, '2026 Off-cycle Adjustments – Engineering'),
    ],
  };
}

// (Browser code as text: the project's TypeScript has no DOM library.) Each table of the
// page against its panel and the window, and what sticks out of the window.
const MEASURE = `(() => {
  const box = (element) => element.getBoundingClientRect();
  const tables = [...document.querySelectorAll('main table')].map((table) => {
    const panel = table.closest('.panel');
    const wrap = table.closest('.table-wrap');
    return {
      table: table.classList[0] || 'table',
      right: Math.round(box(table).right),
      panelRight: panel ? Math.round(box(panel).right) : null,
      scrolls: wrap ? wrap.scrollWidth > wrap.clientWidth : false,
    };
  });
  const buttons = [...document.querySelectorAll('main td.actions .button')].map((button) => ({
    text: button.textContent.trim(),
    right: Math.round(box(button).right),
  }));
  const headings = [...document.querySelectorAll('table.key-list thead th')].map((th) => {
    const style = getComputedStyle(th);
    const inner = th.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    return { text: th.textContent.trim(), lines: Math.round(inner / parseFloat(style.lineHeight)) };
  });
  return { pageWidth: document.documentElement.scrollWidth, tables, buttons, headings };
})()`;

interface Measured {
  pageWidth: number;
  tables: { table: string; right: number; panelRight: number | null; scrolls: boolean }[];
  buttons: { text: string; right: number }[];
  headings: { text: string; lines: number }[];
}

describe('Connections and Webhooks fit a desktop and a phone (browser)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  async function measure(path: string, width: typeof PHONE, name: string): Promise<Measured> {
    await page.setViewportSize(width);
    await page.goto(`${server.url}${path}`);
    await page.waitForLoadState('load');
    await screenshot(page, `layout-${name}-${width.width}`);
    return (await page.evaluate(MEASURE)) as Measured;
  }

  /** Every table inside its panel and the window, none scrolling sideways. */
  function expectFits(measured: Measured, width: number) {
    expect(measured.pageWidth).toBe(width);
    expect(measured.tables.length).toBeGreaterThan(0);
    for (const table of measured.tables) {
      expect(table).toEqual({
        ...table,
        scrolls: false,
        right: Math.min(table.right, table.panelRight ?? width, width),
      });
    }
    for (const button of measured.buttons) {
      expect(button).toEqual({ ...button, right: Math.min(button.right, width) });
    }
  }

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [dataSet()], trustProxy: ['127.0.0.1'] });
    const used: [string, string][] = [
      ['Looker export for the finance team (quarterly board pack)', '2001:db8:85a3::8a2e:370:7334'],
      ['HRIS nightly synchronisation – Workday production tenant', '203.0.113.254'],
    ];
    for (const [name, address] of used) {
      const secret = await server.createKey('initech', name, {
        cycles: [FINANCE, ENGINEERING],
        // Columns of data still to come: this data set has none.
        hiddenColumns: ['baseSalaryAnnualised', 'targetBonusPercentage', 'equityGrantValue'],
        allowUnknownColumns: true,
        expiresIn: '90d',
      });
      await server.request('/ping', { key: secret, headers: { 'x-forwarded-for': address } });
    }
    await server.createKey('initech', 'Tableau dashboards', { expiresIn: '5d' });
    await server.createKey('initech', 'Power BI', {
      hiddenColumns: ['salary'],
      allowUnknownColumns: true,
    });

    const organization = await findOrganizationBySlug(server.database.db, 'initech');
    const endpoint = await addWebhookEndpoint(server.database.db, {
      org: 'initech',
      url: 'https://hooks.analytics-warehouse.example.com/compplan/receivers/finance-team-sync',
      allowPrivateNetworks: [],
    });
    // Test pings waiting to be sent: no dispatcher runs here, so nothing leaves loopback.
    for (let ping = 0; ping < 3; ping++) {
      await testWebhookEndpoint(server.database.db, organization?.id ?? '', endpoint.id);
    }

    browser = await launchBrowser(server.url);
    page = await browser.context.newPage();
    await signInNewOwner(page, server, 'layout.owner@initech.example');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the key table fits a 1280 px window: every column in its panel, Roll and Revoke in view, headings on one line', async () => {
    const measured = await measure('/app/settings/connections', DESKTOP, 'connections');
    expectFits(measured, DESKTOP.width);
    expect(measured.buttons.map((button) => button.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Roll/), expect.stringMatching(/^Revoke/)]),
    );
    expect(measured.buttons).toHaveLength(8);
    for (const heading of measured.headings) expect(heading).toEqual({ ...heading, lines: 1 });
  });

  it('the key table fits a 390 px phone', async () => {
    expectFits(await measure('/app/settings/connections', PHONE, 'connections'), PHONE.width);
  });

  it('the deliveries table fits a 390 px phone and a 1280 px window', async () => {
    for (const width of [PHONE, DESKTOP]) {
      const measured = await measure('/app/settings/connections/webhooks', width, 'webhooks');
      expect(measured.tables.map((table) => table.table)).toEqual(['delivery-list']);
      expectFits(measured, width.width);
    }
  });
});
