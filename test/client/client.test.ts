// @compplan/client against a real compplan server over real HTTP. The only thing put
// between them is an observing fetch (it calls the real fetch and records what happened),
// so that the tests can count requests and see their timing.
import { createServer, type Server, type Socket } from 'node:net';
import {
  AuthenticationError,
  type ClientOptions,
  CompplanClient,
  ConnectionError,
  InvalidRequestError,
  type MeritCycleColumns,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
} from '@compplan/client';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/services/process.js';
import { CYCLES_IN_ORDER, employeeIdsInOrder, SDK_CYCLE, SDK_ORG, sdkDataSet } from './fixtures.js';

interface Call {
  url: string;
  sentAt: number;
  answeredAt: number;
  status: number;
}

function observingFetch(calls: Call[]): typeof fetch {
  return async (input, init) => {
    const sentAt = Date.now();
    const response = await fetch(input, init);
    calls.push({ url: String(input), sentAt, answeredAt: Date.now(), status: response.status });
    return response;
  };
}

const EMPLOYEES = 53;

describe('@compplan/client against a real server', () => {
  let server: TestServer;
  let key: string;
  let calls: Call[];
  const client = (options: Partial<ClientOptions> = {}) => {
    calls = [];
    return new CompplanClient({
      baseUrl: server.url,
      apiKey: key,
      fetch: observingFetch(calls),
      ...options,
    });
  };

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)] });
    key = await server.createKey(SDK_ORG);
  });
  afterAll(async () => {
    await server.close();
  });

  it('pings with the key', async () => {
    expect(await client().ping()).toEqual({ message: 'pong' });
  });

  it('iterates every merit cycle across pages, newest first, following nextCursor', async () => {
    const sdk = client();
    const ids: string[] = [];
    for await (const cycle of sdk.meritCycles.list({ limit: 2 })) ids.push(cycle.id);
    expect(ids).toEqual(CYCLES_IN_ORDER);
    expect(calls.length).toBe(3);
  });

  it('filters by status and start date, and keeps the filters across pages', async () => {
    const cycles = await client()
      .meritCycles.list({ status: 'finalized', startDate: { gte: '2023-06-01' }, limit: 1 })
      .toArray();
    expect(cycles.map((cycle) => cycle.id)).toEqual([SDK_CYCLE.finalized]);
    const inactive = await client().meritCycles.list({ status: 'inactive', limit: 1 }).toArray();
    expect(inactive.map((cycle) => cycle.id)).toEqual([SDK_CYCLE.inactive, SDK_CYCLE.empty]);
  });

  it('caps the total at max, separately from the page size, asking only for what is wanted', async () => {
    const ids: string[] = [];
    for await (const employee of client().employees.list(SDK_CYCLE.big, { limit: 10, max: 23 })) {
      ids.push(employee.id);
    }
    expect(ids).toEqual(employeeIdsInOrder(EMPLOYEES).slice(0, 23));
    expect(calls.map((call) => new URL(call.url).searchParams.get('limit'))).toEqual([
      '10',
      '10',
      '3',
    ]);
  });

  it('walks every employee of a cycle in the API order', async () => {
    const employees = await client().employees.list(SDK_CYCLE.big, { limit: 100 }).toArray();
    expect(employees.map((employee) => employee.id)).toEqual(employeeIdsInOrder(EMPLOYEES));
    expect(employees[0]).toEqual(
      expect.objectContaining({
        currencyCode: expect.objectContaining({ code: expect.any(String) }),
        columns: expect.objectContaining({ department: expect.any(Object) }),
      }),
    );
    expect(calls.length).toBe(1);
  });

  it('gives one page with .page(), and the next one from its nextCursor', async () => {
    const list = client().employees.list(SDK_CYCLE.big, { limit: 20 });
    const first = await list.page();
    expect(first.data.map((employee) => employee.id)).toEqual(
      employeeIdsInOrder(EMPLOYEES).slice(0, 20),
    );
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await list.page({ nextCursor: first.nextCursor ?? '' });
    expect(second.data.map((employee) => employee.id)).toEqual(
      employeeIdsInOrder(EMPLOYEES).slice(20, 40),
    );
    const resumed = await client()
      .employees.list(SDK_CYCLE.big, { limit: 20, nextCursor: second.nextCursor ?? '' })
      .toArray();
    expect(resumed.map((employee) => employee.id)).toEqual(employeeIdsInOrder(EMPLOYEES).slice(40));
  });

  it('gets a merit cycle and its exchange rates', async () => {
    const sdk = client();
    expect(await sdk.meritCycles.get(SDK_CYCLE.finalized)).toEqual({
      id: SDK_CYCLE.finalized,
      name: '2024 Annual Merit',
      startDate: '2024-01-01T00:00:00.000Z',
      endDate: '2026-12-31T23:59:59.999Z',
      createdDate: '2024-11-04T00:00:00.000Z',
      status: 'finalized',
    });
    expect(await sdk.meritCycles.exchangeRates(SDK_CYCLE.big)).toEqual({
      base: 'USD',
      rates: { EUR: 0.92, GBP: 0.79, JPY: 151.3 },
    });
  });

  it('gets the column schema of a merit cycle', async () => {
    const sdk = client();
    const columns: MeritCycleColumns = await sdk.meritCycles.columns(SDK_CYCLE.big);
    expect(columns).toEqual({
      data: [
        { key: 'department', name: 'Department', type: 'text', parts: null },
        {
          key: 'employee',
          name: 'Employee',
          type: 'composite',
          parts: [
            { key: 'fullName', type: 'text' },
            { key: 'jobLevel', type: 'text' },
            { key: 'jobTitle', type: 'text' },
          ],
        },
      ],
      nextCursor: null,
    });
    expect(await sdk.meritCycles.columns(SDK_CYCLE.empty)).toEqual({ data: [], nextCursor: null });
    await expect(
      sdk.meritCycles.columns('mc_00000000-0000-4000-8000-000000000000'),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('throws AuthenticationError with status and request id for a bad key, without retrying', async () => {
    calls = [];
    const sdk = new CompplanClient({
      baseUrl: server.url,
      apiKey: 'cpk_wrong',
      fetch: observingFetch(calls),
    });
    const error = await sdk.ping().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({
      status: 401,
      requestId: expect.any(String),
      request: 'GET /ping',
    });
    expect((error as AuthenticationError).message).toBe(
      `GET /ping: 401 Missing or invalid API key (request id ${(error as AuthenticationError).requestId})`,
    );
    expect(calls.length).toBe(1);
  });

  it('throws NotFoundError for a merit cycle the key cannot see', async () => {
    const error = await client()
      .meritCycles.get('mc_00000000-0000-4000-8000-000000000000')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({
      status: 404,
      body: expect.objectContaining({ message: 'Merit cycle not found' }),
    });
  });

  it('throws ValidationError with the items of a 422', async () => {
    const error = await client()
      .meritCycles.list({ startDate: { gte: '2025-02-30' } })
      .page()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).status).toBe(422);
    expect((error as ValidationError).items).toEqual([
      { path: 'gte', message: expect.any(String), code: 'invalid_format' },
    ]);
  });

  it('throws InvalidRequestError for a cursor of another list', async () => {
    const cursor = (await client().employees.list(SDK_CYCLE.big, { limit: 1 }).page()).nextCursor;
    const error = await client()
      .meritCycles.list({ nextCursor: cursor ?? '' })
      .page()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 400 });
  });

  it('refuses a page size outside 1–100 before sending anything', () => {
    expect(() => client().employees.list(SDK_CYCLE.big, { limit: 101 })).toThrow(RangeError);
  });

  it('throws ServerError for a 500 and does not retry it', async () => {
    const broken = await startTestServer({ dataSets: [sdkDataSet(1)] });
    try {
      const brokenKey = await broken.createKey(SDK_ORG);
      await sql`drop table merit_cycle_employees`.execute(broken.database.db);
      calls = [];
      const sdk = new CompplanClient({
        baseUrl: broken.url,
        apiKey: brokenKey,
        fetch: observingFetch(calls),
      });
      const error = await sdk.employees
        .list(SDK_CYCLE.big)
        .page()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServerError);
      expect(error).toMatchObject({ status: 500, requestId: expect.any(String) });
      expect(calls.length).toBe(1);
    } finally {
      await broken.close();
    }
  });

  describe('with the server limit of 2 requests a second', () => {
    let limited: TestServer;
    let limitedKey: string;
    beforeAll(async () => {
      limited = await startTestServer({ dataSets: [sdkDataSet(5)], rateLimitPerSecond: 2 });
    });
    // Each test starts in a fresh window of a fresh key (the quota is counted per key).
    beforeEach(async () => {
      limitedKey = await limited.createKey(SDK_ORG);
    });
    afterAll(async () => {
      await limited.close();
    });
    const limitedClient = (options: Partial<ClientOptions> = {}) => {
      calls = [];
      return new CompplanClient({
        baseUrl: limited.url,
        apiKey: limitedKey,
        fetch: observingFetch(calls),
        ...options,
      });
    };

    it('throws RateLimitError with retryAfter once retries are spent', async () => {
      const sdk = limitedClient({ pacing: false, maxRetries: 0 });
      const results = await Promise.allSettled([sdk.ping(), sdk.ping(), sdk.ping()]);
      const rejected = results.filter((result) => result.status === 'rejected');
      expect(rejected.length).toBe(1);
      const error = (rejected[0] as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({ status: 429, retryAfter: 1, requestId: expect.any(String) });
    });

    it('retries 429s, waiting Retry-After, and holds every request in flight in the same backoff', async () => {
      const sdk = limitedClient({ pacing: false, maxRetries: 5 });
      const pongs = await Promise.all(Array.from({ length: 6 }, () => sdk.ping()));
      expect(pongs).toEqual(Array.from({ length: 6 }, () => ({ message: 'pong' })));
      const firstLimited = calls.find((call) => call.status === 429);
      expect(firstLimited).toBeDefined();
      // Nothing is sent in the second after a 429 said Retry-After: 1.
      const tooSoon = calls.filter(
        (call) =>
          call.sentAt > (firstLimited?.answeredAt ?? 0) &&
          call.sentAt < (firstLimited?.answeredAt ?? 0) + 990,
      );
      expect(tooSoon).toEqual([]);
    });

    it('paces itself from the RateLimit-Policy header, so that a long walk meets no 429', async () => {
      const sdk = limitedClient();
      const started = Date.now();
      for (let i = 0; i < 9; i++) await sdk.ping();
      expect(calls.map((call) => call.status)).toEqual(Array.from({ length: 9 }, () => 200));
      // 2 a second: a request leaves 1,020 ms (the window, 1% and 10 ms to spare) after the
      // one two before it was answered; the ninth leaves 4 × 1,020 ms after the first.
      expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 1_020 - 5);
    });
  });

  it('retries a connection error with backoff, then throws ConnectionError without a status', async () => {
    const port = await freePort();
    calls = [];
    const attempts: number[] = [];
    const sdk = new CompplanClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: key,
      maxRetries: 2,
      backoff: { baseMs: 10, maxMs: 20 },
      fetch: (input, init) => {
        attempts.push(Date.now());
        return fetch(input, init);
      },
    });
    const error = await sdk.ping().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ status: undefined, requestId: undefined, request: 'GET /ping' });
    expect(attempts.length).toBe(3);
  });

  describe('against a server that accepts connections and never answers', () => {
    let silent: Server;
    let url: string;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const address = silent.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('times out each attempt, retries, and throws TimeoutError (a ConnectionError)', async () => {
      const sdk = new CompplanClient({
        baseUrl: url,
        apiKey: key,
        timeoutMs: 150,
        maxRetries: 1,
        backoff: { baseMs: 10, maxMs: 10 },
      });
      const started = Date.now();
      const error = await sdk.ping().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as TimeoutError).message).toBe('GET /ping: no response within 150 ms');
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    });

    it('stops at once when the caller aborts, rejecting with the signal reason', async () => {
      const sdk = new CompplanClient({ baseUrl: url, apiKey: key, timeoutMs: 10_000 });
      const controller = new AbortController();
      const reason = new Error('the user gave up');
      setTimeout(() => controller.abort(reason), 100);
      const started = Date.now();
      await expect(sdk.ping({ signal: controller.signal })).rejects.toBe(reason);
      expect(Date.now() - started).toBeLessThan(2_000);
    });
  });
});
