// Slow clients (OWASP API4): a client that trickles its headers (slowloris), or connects
// and sends nothing, is cut off after the headers timeout with a 408 and the standard
// body, while other clients are served meanwhile. The server's limits are checked as
// configured (10 s, 15 s, …); the cutting is seen on a server given the same limits
// shorter (2 s, 4 s), so that the test does not wait 15 s of wall clock. The limits do not
// depend on the database, so this runs once (on SQLite).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_TIMEOUTS } from '../../src/app.js';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { errorBody, JSON_TYPE } from '../helpers/api-expectations.js';
import { nodeRequest, sendBytes } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TIMEOUTS = { headersMs: 2_000, requestMs: 4_000, checkIntervalMs: 200 };
// Cut at the timeout, checked every 200 ms: never before it, and within this after it.
const LATE_MS = 1_500;
const GAP_MS = 200;
const TIMED_OUT = 'Request Timeout: the request was not received in time';

describe('slow clients', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()], timeouts: TIMEOUTS });
    key = await server.createKey(ACME);
  });
  afterAll(() => server.close());

  it('configures the Node server with the documented limits', async () => {
    const configured = await startTestServer();
    try {
      const http = configured.app.server;
      expect({
        headersTimeout: http.headersTimeout,
        requestTimeout: http.requestTimeout,
        timeout: http.timeout,
        keepAliveTimeout: http.keepAliveTimeout,
        maxHeaderSize: (http as unknown as { maxHeaderSize: number }).maxHeaderSize,
      }).toEqual({
        headersTimeout: 10_000,
        // The whole-request bound is src/http/request-deadline.ts's (SERVER_TIMEOUTS.requestMs),
        // which the upload, timed by its progress, is left out of.
        requestTimeout: 0,
        timeout: 30_000,
        keepAliveTimeout: 72_000,
        maxHeaderSize: 16 * 1024,
      });
      expect(SERVER_TIMEOUTS.checkIntervalMs).toBe(1_000);
      expect(SERVER_TIMEOUTS.requestMs).toBe(15_000);
    } finally {
      await configured.close();
    }
  });

  it('cuts off a slowloris client (a header line every 200 ms) at the headers timeout with 408, an idle connection too, a trickled body at the request timeout, and serves others meanwhile', async () => {
    const headerLines = Array.from({ length: 60 }, (_, i) => `x-slow-${i}: y\r\n`);
    const started = Date.now();
    const slowloris = sendBytes(
      server.url,
      [`GET /ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n`, ...headerLines, '\r\n'],
      { gapMs: GAP_MS, deadlineMs: 20_000 },
    );
    const silent = sendBytes(server.url, [], { deadlineMs: 20_000 });
    // Headers in time, then a form body a byte every 200 ms: cut at the request timeout.
    const slowBody = sendBytes(
      server.url,
      [
        'POST /app/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\n',
        ...Array.from({ length: 200 }, () => 'a'),
      ],
      { gapMs: GAP_MS, deadlineMs: 25_000 },
    );

    // While they hang on, other clients are answered: all of them before the first slow
    // client is cut off.
    for (let i = 0; i < 5; i++) {
      const response = await nodeRequest(server.url, '/ping', { headers: { 'x-api-key': key } });
      expect(response.status).toBe(200);
    }
    const othersServedAfterMs = Date.now() - started;

    for (const response of await Promise.all([slowloris, silent])) {
      expect(response.status).toBe(408);
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(response.headers.connection).toBe('close');
      expect(JSON.parse(response.body)).toEqual(errorBody('', TIMED_OUT, 408));
      expect(response.elapsedMs).toBeGreaterThanOrEqual(TIMEOUTS.headersMs - 50);
      expect(response.elapsedMs).toBeLessThan(TIMEOUTS.headersMs + LATE_MS);
      expect(othersServedAfterMs).toBeLessThan(response.elapsedMs);
    }
    // The slowloris did not get its 60 header lines in: it was cut mid-way.
    expect((await slowloris).elapsedMs).toBeLessThan(60 * GAP_MS);

    const body = await slowBody;
    expect(body.status).toBe(408);
    expect(JSON.parse(body.body)).toEqual(errorBody('', TIMED_OUT, 408));
    expect(body.elapsedMs).toBeGreaterThanOrEqual(TIMEOUTS.requestMs - 50);
    expect(body.elapsedMs).toBeLessThan(TIMEOUTS.requestMs + LATE_MS);
  }, 40_000);

  it('logs a timed-out client by error code only, never the bytes it sent', async () => {
    const lines = server.logs.filter((line) => line.code === 'ERR_HTTP_REQUEST_TIMEOUT');
    expect(lines.length).toBe(3);
    // The headers' two by Node's parser; the body's by the whole-request bound.
    expect(lines.map((line) => line.msg).sort()).toEqual([
      'refused a request the HTTP parser could not accept',
      'refused a request the HTTP parser could not accept',
      'refused a request whose body did not arrive in time',
    ]);
    for (const line of lines) {
      expect(line).toEqual({
        level: 30,
        time: expect.any(Number),
        pid: process.pid,
        hostname: expect.any(String),
        code: 'ERR_HTTP_REQUEST_TIMEOUT',
        statusCode: 408,
        remoteAddress: '127.0.0.1',
        msg: expect.any(String),
      });
    }
    expect(JSON.stringify(server.logs)).not.toContain(key);
  });
});
