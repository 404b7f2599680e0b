// The SDK's deltas (docs/delta-sync.md) against a real server: iterate the changes, keep
// the token the iteration ends with, sync again from it; removals typed and told apart
// by isRemoved; an expired token is a DeltaTokenExpiredError.
import {
  CompplanClient,
  DeltaTokenExpiredError,
  isRemoved,
  type MeritCycleEmployee,
  type Removed,
} from '@compplan/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHANGE_RETENTION_DAYS } from '../../src/config.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { employeeId, SDK_CYCLE, SDK_ORG, sdkDataSet } from './fixtures.js';

const EMPLOYEES = 60;

describe('client deltas', () => {
  let server: TestServer;
  let client: CompplanClient;
  const clock = new TestClock();

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)], now: clock.now });
    client = new CompplanClient({ baseUrl: server.url, apiKey: await server.createKey(SDK_ORG) });
  });
  afterAll(() => server.close());

  it('a full sync, then only the changes; the token comes at the end of each iteration', async () => {
    const first = client.employees.delta(SDK_CYCLE.big, { limit: 25 });
    expect(first.deltaToken).toBeUndefined();
    const copy = new Map<string, MeritCycleEmployee>();
    for await (const change of first) {
      if (isRemoved(change)) copy.delete(change.id);
      else copy.set(change.id, change);
    }
    expect(copy.size).toBe(EMPLOYEES);
    expect(first.deltaToken).toEqual(expect.any(String));

    const dataSet = sdkDataSet(EMPLOYEES);
    const cycle = dataSet.meritCycles[0] as DataSetInput['meritCycles'][number];
    cycle.employees = (cycle.employees ?? []).slice(1);
    await server.load(dataSet, { prune: true });

    const next = client.employees.delta(SDK_CYCLE.big, { deltaToken: first.deltaToken as string });
    const changes: (MeritCycleEmployee | Removed)[] = [];
    for await (const change of next) changes.push(change);
    expect(changes).toStrictEqual([{ id: employeeId(0), removed: true }]);
    expect(next.deltaToken).toEqual(expect.any(String));

    const cycles = client.meritCycles.delta();
    const all = [];
    for await (const change of cycles) all.push(change);
    expect(all.map((c) => c.id).sort()).toStrictEqual(
      (await client.meritCycles.list().toArray()).map((c) => c.id).sort(),
    );
  });

  it('an expired token is a DeltaTokenExpiredError', async () => {
    const cycles = client.meritCycles.delta();
    for await (const _ of cycles) {
      // read to the end for the token
    }
    clock.advance((DEFAULT_CHANGE_RETENTION_DAYS + 1) * 86_400_000);
    const stale = client.meritCycles.delta({ deltaToken: cycles.deltaToken as string });
    await expect(stale.pages().next()).rejects.toBeInstanceOf(DeltaTokenExpiredError);
  });
});
