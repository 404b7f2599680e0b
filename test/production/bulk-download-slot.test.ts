// One bulk download per key across instances (docs/bulk-download.md): two servers on the
// same PostgreSQL database and the same Redis. While a key's download streams from one,
// the other answers the same key 429 with Retry-After; once it ends, the other serves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIDE_CYCLE, WIDE_ORG, wideCycleDataSet } from '../fixtures/bulk-data-sets.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { pausedDownload } from '../helpers/paused-download.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type RedisServer, startRedis } from '../helpers/services/redis.js';

const bulkPath = `${employeesPath(WIDE_CYCLE)}/bulk`;

describe('one bulk download per key across instances', () => {
  let first: TestServer;
  let second: TestServer;
  let key: string;
  let redis: RedisServer;

  beforeAll(async () => {
    // A Redis of its own, as every production test starts the services it uses.
    redis = await startRedis();
    const redisUrl = redis.url;
    first = await startTestServer({ dataSets: [wideCycleDataSet('v1')], redisUrl });
    second = await startTestServer({ database: first.databaseConfig, redisUrl });
    key = await first.createKey(WIDE_ORG);
  }, 120_000);
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await redis?.stop();
  });

  it('refuses a second download of the key on another instance while the first streams, then serves it', async () => {
    const download = await pausedDownload(`${first.url}${bulkPath}`, { 'x-api-key': key });
    const meanwhile = await fetch(`${second.url}${bulkPath}`, { headers: { 'x-api-key': key } });
    expect(meanwhile.status).toBe(429);
    expect(meanwhile.headers.get('retry-after')).toBe('10');
    await meanwhile.text();

    expect(await download.rest()).toHaveProperty('body');
    // The slot is given back as the first response closes.
    let after = await fetch(`${second.url}${bulkPath}`, { headers: { 'x-api-key': key } });
    for (let tries = 0; after.status === 429 && tries < 20; tries++) {
      await after.text();
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await fetch(`${second.url}${bulkPath}`, { headers: { 'x-api-key': key } });
    }
    expect(after.status).toBe(200);
    await after.text();
  }, 60_000);
});
