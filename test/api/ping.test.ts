import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('GET /ping', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  it('answers 200 {"message":"pong"} as JSON to a valid key', async () => {
    const response = await server.request('/ping', { key });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({ message: 'pong' });
  });

  it('answers 401 with the standard error body when no key is sent', async () => {
    const response = await server.request('/ping', { key: null });
    expect(response.status).toBe(401);
    const body = await response.json();
    expect(body).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      path: '/ping',
      message: 'Missing or invalid API key',
      statusCode: 401,
    });
  });

  it('answers HEAD like GET, without a body', async () => {
    const response = await server.request('/ping', { key, method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe('');
  });
});
