// /docs: the API reference works offline. Every asset the page loads comes from this
// server, the Content-Security-Policy allows nothing else, and the document it shows is
// the app's own, with no fixed server so that try-it-out calls the server serving it.
// (scripts/docs-screenshot.js drives it in Chromium: npm run docs:screenshot.)
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the /docs page', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('is served without a key, and every asset it loads is a relative URL of this server', async () => {
    const page = await fetch(`${server.url}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    expect(assets.length).toBeGreaterThanOrEqual(5);
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(?:[a-z]+:)?\/\//i);
      const response = await fetch(new URL(asset, `${server.url}/docs/`));
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
      const text = await response.text();
      // No stylesheet pulls in a web font or another stylesheet from elsewhere.
      if (asset.endsWith('.css')) expect(text).not.toMatch(/@import|@font-face/);
    }
  });

  it('forbids the browser to load anything from another origin', async () => {
    const page = await fetch(`${server.url}/docs/`);
    const policy = page.headers.get('content-security-policy') ?? '';
    const sources = policy
      .split(';')
      .flatMap((directive) => directive.trim().split(/\s+/).slice(1))
      .filter((source) => /^(?:https?:|\*|wss?:)/.test(source) && source !== 'data:');
    expect(policy).toContain("default-src 'self'");
    expect(sources).toEqual([]);
  });

  it('turns the online spec validator off', async () => {
    const initializer = await (
      await fetch(`${server.url}/docs/static/swagger-initializer.js`)
    ).text();
    expect(initializer).toContain('validatorUrl: null');
  });

  it('shows the app document without its fixed server, so try-it-out calls this server', async () => {
    const shown = await (await fetch(`${server.url}/docs/json`)).json();
    const { servers, ...rest } = JSON.parse(readFileSync(`${ROOT}openapi.json`, 'utf8'));
    expect(servers).toEqual([
      { url: 'http://localhost:3000', description: 'A local server (npm start)' },
    ]);
    expect(shown).toEqual(rest);
  });
});
