// The bound docs/operations.md states for a PostgreSQL that stops answering ("PostgreSQL
// stops answering"): every request gets 503 within 3 s, with the real bounds of
// src/db/timeouts.ts (the production test uses smaller ones, to see more of an outage).
// On a throwaway cluster of its own, frozen with SIGSTOP for 9 s under three polling
// clients, so that the requests meet each of the waits: a statement sent on an open
// connection, a new connection that is never answered, and the key's lookup once its
// kept answer has gone 4 s unconfirmed.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { employeesPath, errorBody, JSON_TYPE } from '../helpers/api-expectations.js';
import { createDatabaseIn } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ClusterFreezer } from '../helpers/services/frozen-cluster.js';
import { type PostgresCluster, startPostgres } from '../helpers/services/postgres.js';

const BOUND_MS = 3_000;
const FROZEN_MS = 9_000;
const UNAVAILABLE = 'Service Unavailable: the database cannot be reached';

describe('PostgreSQL frozen (SIGSTOP): 503 within the documented 3 s', () => {
  let cluster: PostgresCluster;
  let freezer: ClusterFreezer;
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    cluster = await startPostgres();
    freezer = new ClusterFreezer(cluster);
    server = await startTestServer({
      database: await createDatabaseIn(cluster.url, 'compplan_bound'),
      dataSets: [acmeDataSet()],
    });
    key = await server.createKey(ACME);
  }, 120_000);
  afterAll(async () => {
    freezer?.thaw();
    await server?.close();
    await cluster?.destroy();
  });

  it('every request sent while the server is frozen gets 503 with Retry-After within 3 s: on an open connection, a new one, and the key looked up again', async () => {
    const path = employeesPath(CYCLE.annual2025);
    // Open connections in the pool before the freeze.
    const opened = await Promise.all(
      Array.from({ length: 3 }, (_, i) => server.request(`${path}?limit=${i + 1}`, { key })),
    );
    expect(opened.map((response) => response.status)).toEqual([200, 200, 200]);
    const answers: { status: number; retryAfter: string | null; body: unknown; ms: number }[] = [];
    freezer.freeze();
    const frozenAt = performance.now();
    try {
      await Promise.all(
        Array.from({ length: 3 }, async (_, client) => {
          // Each request a page of another size: none is answered from the response cache.
          for (let n = 0; performance.now() - frozenAt < FROZEN_MS - BOUND_MS; n++) {
            const sent = performance.now();
            const response = await fetch(`${server.url}${path}?limit=${10 + client * 30 + n}`, {
              headers: { 'x-api-key': key },
              signal: AbortSignal.timeout(FROZEN_MS),
            });
            const text = await response.text();
            expect(response.headers.get('content-type')).toBe(JSON_TYPE);
            answers.push({
              status: response.status,
              retryAfter: response.headers.get('retry-after'),
              body: JSON.parse(text),
              ms: Math.round(performance.now() - sent),
            });
            await sleep(20);
          }
        }),
      );
    } finally {
      freezer.thaw();
    }
    const summary = JSON.stringify(answers.map(({ status, ms }) => [status, ms]));
    expect(answers.length, summary).toBeGreaterThanOrEqual(6);
    for (const answer of answers) {
      expect([answer.status, answer.retryAfter], summary).toEqual([503, '1']);
      expect(answer.body).toEqual(errorBody(path, UNAVAILABLE, 503));
      expect(answer.ms, summary).toBeLessThan(BOUND_MS);
    }
    // Each wait was met: a statement unanswered on an open connection, a new connection
    // unanswered, the key's lookup once its kept answer went unconfirmed.
    const causes = server.logs
      .filter((line) => line.msg === 'database unavailable')
      .map((line) => String((line.err as { stack?: string } | undefined)?.stack));
    expect(causes.some((stack) => stack.startsWith('DatabaseNotAnswering'))).toBe(true);
    expect(causes.some((stack) => stack.includes('due to connection timeout'))).toBe(true);
    expect(causes.some((stack) => stack.includes('findActiveKeyByHash'))).toBe(true);
  }, 60_000);
});
