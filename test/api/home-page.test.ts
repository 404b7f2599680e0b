// GET / (src/plugins/home.ts): a browser gets a small page that leads to /docs, /app
// and a first curl line; an API client — curl's */*, application/json, no Accept at all —
// keeps the JSON 404 of any unknown path (docs/api-behaviour.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, JSON_TYPE } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { textOf } from '../helpers/web-client.js';

// What Chromium sends for a page it navigates to.
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

describe('GET /', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('answers a browser with a small page linking /docs, /app, /openapi.json and a curl line for this server', async () => {
    const response = await fetch(`${server.url}/`, { headers: { accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('vary')).toMatch(/(^|, *)accept(,|$)/i);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
    );
    const body = await response.text();
    expect(body).toContain('<title>Compensation Planning API · compplan</title>');
    for (const href of ['/docs', '/app', '/openapi.json']) {
      expect(body).toContain(`<a href="${href}">`);
    }
    expect(textOf(body)).toContain(`curl -H "x-api-key: cpk_…" ${server.url}/ping`);
    // Everything it loads comes from this server.
    expect(body).not.toMatch(/(src|href)="(https?:)?\/\//);
    const head = await fetch(`${server.url}/`, {
      method: 'HEAD',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it.each([
    ['curl (*/*)', { accept: '*/*' }],
    ['application/json', { accept: 'application/json' }],
    ['JSON before HTML', { accept: 'application/json, text/html;q=0.5' }],
    ['no Accept header', {}],
  ])(
    'answers an API client (%s) with the JSON 404 of an unknown path',
    async (_name, headers: Record<string, string>) => {
      const response = await fetch(`${server.url}/`, { headers });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe(JSON_TYPE);
      expect(response.headers.get('vary')).toMatch(/(^|, *)accept(,|$)/i);
      const { timestamp: _timestamp, ...body } = (await response.json()) as Record<string, unknown>;
      const { timestamp: _expected, ...expected } = errorBody('/', 'Route GET / not found', 404);
      expect(body).toEqual(expected);
    },
  );

  it('answers other methods on / with the JSON 404 of an unknown path, not the read-only API’s 405', async () => {
    const response = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(errorBody('/', 'Route POST / not found', 404));
  });
});
