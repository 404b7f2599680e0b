// A bulk download meets a PostgreSQL that stops answering in the middle (docs/operations.md,
// "PostgreSQL stops answering"): the chunk's COPY is bounded as any statement is (2.5 s,
// src/db/postgres-pool.ts), so the download is cut off — which its client sees as a
// response that did not end, never as a complete one — and its connection is closed
// instead of going back to the pool. Once PostgreSQL answers again, the next download is
// whole. On a throwaway cluster of its own, frozen with SIGSTOP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_BOUNDS } from '../../src/db/timeouts.js';
import {
  WIDE_CYCLE,
  WIDE_EMPLOYEES,
  WIDE_ORG,
  wideCycleDataSet,
} from '../fixtures/bulk-data-sets.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { createDatabaseIn } from '../helpers/databases.js';
import { pausedDownload } from '../helpers/paused-download.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ClusterFreezer } from '../helpers/services/frozen-cluster.js';
import { type PostgresCluster, startPostgres } from '../helpers/services/postgres.js';

const bulkPath = `${employeesPath(WIDE_CYCLE)}/bulk`;

describe('a bulk download while PostgreSQL stops answering', () => {
  let cluster: PostgresCluster;
  let freezer: ClusterFreezer;
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    cluster = await startPostgres();
    freezer = new ClusterFreezer(cluster);
    server = await startTestServer({
      database: await createDatabaseIn(cluster.url, 'compplan_frozen_bulk'),
      dataSets: [wideCycleDataSet('v1')],
    });
    key = await server.createKey(WIDE_ORG);
  }, 120_000);
  afterAll(async () => {
    freezer?.thaw();
    await server?.close();
    await cluster?.destroy();
  });

  it('is cut off within the statement bound, and the next download once it answers again is whole', async () => {
    const download = await pausedDownload(`${server.url}${bulkPath}`, { 'x-api-key': key });
    freezer.freeze();
    const frozenAt = performance.now();
    let read: Awaited<ReturnType<typeof download.rest>>;
    try {
      read = await download.rest();
    } finally {
      freezer.thaw();
    }
    const cutAfterMs = performance.now() - frozenAt;
    expect('error' in read).toBe(true);
    // The statement's bound (a chunk's COPY may have been sent just before the freeze, as
    // the server filled the socket's buffers), and well before the 30 s a silent socket is
    // given.
    expect(cutAfterMs).toBeGreaterThanOrEqual(POSTGRES_BOUNDS.queryMs - 500);
    expect(cutAfterMs).toBeLessThan(POSTGRES_BOUNDS.queryMs + 4_000);

    const again = await server.request(bulkPath, { key });
    expect(again.status).toBe(200);
    const lines = (await again.text()).trimEnd().split('\n');
    expect(lines).toHaveLength(WIDE_EMPLOYEES);
    expect(server.logs.some((line) => line.msg === 'bulk download failed')).toBe(true);
  }, 60_000);
});
