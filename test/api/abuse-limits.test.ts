// Abuse limits (OWASP API4, unrestricted resource consumption; API8, misconfiguration):
// the size of what a client may send, one key's requests in flight (never refused within its
// quota), the
// per-address throttle on failed authentication, and the security headers of JSON
// responses. Slow clients (timeouts) are in test/hardening/slow-clients.test.ts.
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import {
  cyclePath,
  employeesPath,
  errorBody,
  ISO_UTC_MS,
  JSON_TYPE,
  MERIT_CYCLES,
} from '../helpers/api-expectations.js';
import { nodeRequest, sendBytes } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const API_HEADERS = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
const TOO_MANY = '{"message":"Too Many Requests","statusCode":429}';

// A cycle whose one page of employees is large (16 × 1 MiB), so that a client that stops
// reading keeps its request in flight: the response cannot all fit in socket buffers.
const HOARD = 'hoard';
const HOARD_CYCLE = 'mc_60000000-0000-4000-8000-000000000001';
function hoardDataSet(): DataSetInput {
  const filler = 'x'.repeat(1024 * 1024);
  return {
    organization: { slug: HOARD, name: 'Hoard', apiKeysEnabled: true },
    meritCycles: [
      {
        id: HOARD_CYCLE,
        name: 'Big pages',
        status: 'active',
        startDate: '2025-01-01T00:00:00.000Z',
        endDate: '2025-02-01T00:00:00.000Z',
        createdDate: '2024-12-01T00:00:00.000Z',
        currency: 'USD',
        employees: Array.from({ length: 16 }, (_, i) => ({
          email: `big${i}@hoard.example`,
          firstName: 'Big',
          lastName: `Page${String(i).padStart(2, '0')}`,
          currencyCode: 'USD',
          eligibilityStatus: 'eligible' as const,
          columns: { filler: { name: 'Filler', type: 'text', value: filler } },
        })),
      },
    ],
  };
}

describe('abuse limits', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), hoardDataSet()] });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  const get = (target: string, headers: Record<string, string> = {}) =>
    nodeRequest(server.url, target, { headers: { 'x-api-key': key, ...headers } });

  describe('request and header size', () => {
    it('answers 431 with the standard JSON body to headers over 16 KiB, and closes the connection', async () => {
      const response = await sendBytes(server.url, [
        `GET /ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nx-filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
      ]);
      expect(response.status).toBe(431);
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(response.headers.connection).toBe('close');
      expect(JSON.parse(response.body)).toEqual(
        errorBody('/ping', 'Request Header Fields Too Large', 431),
      );
    });

    it('serves a request whose headers are large but under the limit (15 KiB)', async () => {
      const response = await get('/ping', { 'x-filler': 'a'.repeat(15 * 1024) });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: '{"message":"pong"}',
      });
    });

    it('answers one 431 to thousands of tiny headers adding up past the limit', async () => {
      const many = Array.from({ length: 3_000 }, (_, i) => `x-h${i}: v\r\n`).join('');
      const response = await sendBytes(server.url, [
        `GET /ping HTTP/1.1\r\nHost: x\r\n${many}\r\n`,
      ]);
      expect(response.status).toBe(431);
      expect(JSON.parse(response.body)).toEqual(
        errorBody('/ping', 'Request Header Fields Too Large', 431),
      );
    });

    it('answers 413 with the standard body to a body over 64 KiB on a route that reads bodies', async () => {
      const response = await nodeRequest(server.url, '/nope', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ x: 'a'.repeat(70 * 1024) }),
      });
      expect(response.status).toBe(413);
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(JSON.parse(response.body)).toEqual(
        errorBody('/nope', 'Request body is too large', 413),
      );
    });

    it('ignores a body sent with a GET: the answer is the GET’s', async () => {
      const response = await nodeRequest(server.url, '/ping', {
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ x: 'a'.repeat(200 * 1024) }),
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: '{"message":"pong"}',
      });
    });
  });

  describe('URL length', () => {
    it('answers 414 with the standard body to a URL over 8 KiB, before routing or authentication', async () => {
      for (const target of [
        `/ping?x=${'a'.repeat(8_200)}`,
        `${MERIT_CYCLES}?nextCursor=${'a'.repeat(9_000)}`,
        `${MERIT_CYCLES}/${'a'.repeat(9_000)}`,
        `/${'a'.repeat(12_000)}`,
      ]) {
        for (const headers of [{}, { 'x-api-key': '' }]) {
          const response = await nodeRequest(server.url, target, {
            headers: { 'x-api-key': key, ...headers },
          });
          expect(response.status, target.slice(0, 60)).toBe(414);
          expect(response.headers['content-type']).toBe(JSON_TYPE);
          expect(JSON.parse(response.body)).toEqual(
            errorBody(target.split('?')[0] ?? target, 'URI Too Long', 414),
          );
        }
      }
    });

    it('answers 414 (not 431) when the request line alone passes the header limit', async () => {
      const response = await sendBytes(server.url, [
        `GET /ping?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      ]);
      expect(response.status).toBe(414);
      expect(JSON.parse(response.body)).toEqual({
        timestamp: expect.stringMatching(ISO_UTC_MS),
        path: '',
        message: 'URI Too Long',
        statusCode: 414,
      });
    });

    it('still routes a URL of exactly 8 KiB', async () => {
      const prefix = `${MERIT_CYCLES}?nextCursor=`;
      const target = `${prefix}${'a'.repeat(8 * 1024 - prefix.length)}`;
      expect(target.length).toBe(8192);
      const response = await get(target);
      // A cursor over 2,048 characters is refused as a cursor, not as a URL.
      expect(response.status).toBe(400);
    });
  });

  describe('requests in flight per key', () => {
    let hoarder: string;
    let sockets: Socket[] = [];

    beforeAll(async () => {
      hoarder = await server.createKey(HOARD);
    });
    afterAll(() => {
      for (const socket of sockets) socket.destroy();
    });

    /** Starts a request for a 16 MiB page and stops reading once the answer begins. */
    function stalledReader(apiKey: string): Promise<Socket> {
      const { port } = new URL(server.url);
      return new Promise((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        sockets.push(socket);
        socket.on('error', () => {});
        socket.once('data', () => {
          socket.pause();
          resolve(socket);
        });
        socket.once('close', () => reject(new Error('closed before answering')));
        socket.write(
          `GET ${employeesPath(HOARD_CYCLE)}?limit=16 HTTP/1.1\r\nHost: x\r\nx-api-key: ${apiKey}\r\n\r\n`,
        );
      });
    }

    it('serves a key whose 12 earlier requests stopped reading: requests in flight within the quota are never refused, and other keys are served meanwhile', async () => {
      await Promise.all(Array.from({ length: 12 }, () => stalledReader(hoarder)));

      const next = await nodeRequest(server.url, cyclePath(HOARD_CYCLE), {
        headers: { 'x-api-key': hoarder },
      });
      expect(next.status).toBe(200);
      const otherKey = await server.createKey(HOARD, 'other');
      const other = await nodeRequest(server.url, employeesPath(HOARD_CYCLE), {
        headers: { 'x-api-key': otherKey },
      });
      expect(other.status).toBe(200);

      for (const socket of sockets) socket.destroy();
      sockets = [];
    });

    it('never counts a request that was refused authentication', async () => {
      const answers = await Promise.all(
        Array.from({ length: 12 }, () =>
          nodeRequest(server.url, '/ping', { headers: { 'x-api-key': 'cpk_nope' } }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(401));
    });
  });

  describe('failed-authentication throttling per client address', () => {
    it('throttles the address that fails, not another address, and never a valid key', async () => {
      const from = (localAddress: string, apiKey: string) =>
        nodeRequest(server.url, '/ping', { headers: { 'x-api-key': apiKey }, localAddress });
      for (let attempt = 1; attempt <= 20; attempt++) {
        expect((await from('127.0.0.2', `cpk_guess${attempt}`)).status).toBe(401);
      }
      const blocked = await from('127.0.0.2', 'cpk_guess21');
      expect({ status: blocked.status, body: blocked.body }).toEqual({
        status: 429,
        body: TOO_MANY,
      });
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(10);
      // Another client address is judged on its own failures.
      expect((await from('127.0.0.3', 'cpk_guess1')).status).toBe(401);
      // A valid key from the throttled address is served.
      expect((await from('127.0.0.2', key)).status).toBe(200);
    });
  });

  describe('security headers of JSON responses', () => {
    const kinds: [string, string, string, Record<string, string>][] = [
      ['200 ping', 'GET', '/ping', {}],
      ['200 list', 'GET', MERIT_CYCLES, {}],
      ['200 employees', 'GET', employeesPath(CYCLE.annual2025), {}],
      ['200 gzip', 'GET', employeesPath(CYCLE.annual2025), { 'accept-encoding': 'gzip' }],
      ['200 HEAD', 'HEAD', cyclePath(CYCLE.annual2025), {}],
      ['400 cursor', 'GET', `${MERIT_CYCLES}?nextCursor=abc`, {}],
      ['400 malformed URL', 'GET', `${MERIT_CYCLES}/%E0%A4%A`, {}],
      ['401', 'GET', '/ping', { 'x-api-key': 'wrong' }],
      ['404 path', 'GET', '/nope', {}],
      ['404 cycle', 'GET', cyclePath('mc_00000000-0000-4000-8000-000000000000'), {}],
      ['405', 'DELETE', MERIT_CYCLES, {}],
      ['414', 'GET', `/ping?x=${'a'.repeat(9_000)}`, {}],
      ['422', 'GET', `${MERIT_CYCLES}?limit=0`, {}],
      ['200 healthz', 'GET', '/healthz', {}],
    ];

    it.each(kinds)(
      '%s carries nosniff, CSP default-src none, no-referrer and no-store, and no X-Powered-By or CORS header',
      async (_, method, target, headers) => {
        const response = await nodeRequest(server.url, target, {
          method,
          headers: { 'x-api-key': key, ...headers },
        });
        expect(response.headers['content-type']).toBe(JSON_TYPE);
        for (const [name, value] of Object.entries(API_HEADERS)) {
          expect(response.headers[name], name).toBe(value);
        }
        expect(response.headers['x-powered-by']).toBeUndefined();
        expect(response.headers.server).toBeUndefined();
        // No CORS: browsers may not call the API from other origins with a key.
        expect(response.headers['access-control-allow-origin']).toBeUndefined();
      },
    );

    it('sends the same headers on the answers the HTTP parser refuses (431, 400)', async () => {
      for (const bytes of [
        `GET /ping HTTP/1.1\r\nHost: x\r\nx-filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
        'NOT HTTP AT ALL\r\n\r\n',
      ]) {
        const response = await sendBytes(server.url, [bytes]);
        expect(response.headers['content-type']).toBe(JSON_TYPE);
        for (const [name, value] of Object.entries(API_HEADERS)) {
          expect(response.headers[name], name).toBe(value);
        }
      }
    });

    it('leaves the HTML pages their own headers (web application, API reference)', async () => {
      const signIn = await nodeRequest(server.url, '/app/sign-in');
      expect(signIn.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(signIn.headers['content-security-policy']).toBe(
        "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
      );
      expect(signIn.headers['referrer-policy']).toBe('same-origin');
      const docs = await nodeRequest(server.url, '/docs/');
      expect(docs.status).toBe(200);
      expect(docs.headers['content-type']).toMatch(/^text\/html/);
      expect(docs.headers['content-security-policy']).not.toBe(
        API_HEADERS['content-security-policy'],
      );
    });

    it('answers a request without Host (HTTP/1.1) with 400 and the standard body', async () => {
      const response = await sendBytes(server.url, [
        `GET /ping HTTP/1.1\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`,
      ]);
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toEqual(
        errorBody('/ping', 'Bad Request: the Host header is missing', 400),
      );
    });
  });
});
