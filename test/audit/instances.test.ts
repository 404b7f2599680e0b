// The audit log of `compplan serve` as operators run it (spawned from the build), on the
// test's database: two instances write one log (entries from both, none lost when they
// stop on SIGTERM), and an instance killed with SIGKILL loses at most the entries of its
// last second (each instance writes its entries at least once a second).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { importDataSet } from '../../src/import/load.js';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { startCliServer, stopAllProcesses } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { auditEntriesOf, requestsOf } from './helpers.js';

let database: TestDatabase;
let env: Record<string, string>;
let key: string;

async function requestIdsInLog(): Promise<string[]> {
  const handle = openDatabase(database.config);
  try {
    return requestsOf(await auditEntriesOf(handle.db, ACME)).map((entry) => entry.requestId ?? '');
  } finally {
    await handle.close();
  }
}

async function ping(url: string, agent: string): Promise<string> {
  const response = await fetch(`${url}/ping`, {
    headers: { 'x-api-key': key, 'user-agent': agent },
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  return response.headers.get('x-request-id') ?? '';
}

beforeAll(async () => {
  database = await createTestDatabase();
  const handle = openDatabase(database.config);
  try {
    await migrateToLatest(handle);
    await importDataSet(handle, acmeDataSet());
    key = (await createApiKey(handle.db, { org: ACME, name: 'instances' })).key;
  } finally {
    await handle.close();
  }
  const config = database.config;
  env = {
    DATABASE_URL: config.dialect === 'sqlite' ? `sqlite:${config.path}` : config.url,
    RATE_LIMIT_PER_SECOND: '1000000',
  };
});

afterAll(async () => {
  await stopAllProcesses();
  await database?.drop();
});

describe('audit log across instances', () => {
  it('two instances write one log: every request of both is in it after they stop on SIGTERM', async () => {
    const [a, b] = await Promise.all([startCliServer([], env), startCliServer([], env)]);
    const sent: string[] = [];
    for (let n = 0; n < 40; n++) {
      sent.push(await ping(a.url, 'instance-a'), await ping(b.url, 'instance-b'));
    }
    const stopped = await Promise.all([a.stop(), b.stop()]);
    expect(stopped.map((end) => end.code)).toEqual([0, 0]);
    const logged = await requestIdsInLog();
    expect(new Set(logged)).toEqual(new Set(sent));
    expect(logged).toHaveLength(sent.length);
  });

  it('an instance killed with SIGKILL has written every entry older than about a second', async () => {
    const before = new Set(await requestIdsInLog());
    const server = await startCliServer([], env);
    const older: string[] = [];
    for (let n = 0; n < 30; n++) older.push(await ping(server.url, 'killed'));
    // Longer than one round of the writer (1 s), with room for a busy machine.
    await sleep(1_500);
    const last: string[] = [];
    for (let n = 0; n < 30; n++) last.push(await ping(server.url, 'killed'));
    const exited = new Promise((resolve) => server.process.once('exit', resolve));
    server.process.kill('SIGKILL');
    await exited;
    const logged = (await requestIdsInLog()).filter((id) => !before.has(id));
    for (const id of older) expect(logged).toContain(id);
    expect(logged.length).toBeLessThanOrEqual(older.length + last.length);
  });
});
