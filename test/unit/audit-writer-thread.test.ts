// The audit log's writer thread on SQLite (src/audit/writer-thread.ts), a real thread with
// its own connection to a real database file: the entries it is handed are in the log
// when the write settles, and a thread that stopped (its memory bound, an error it did not
// catch) is replaced by a new one for the next round. A round of any size is written
// whole and in order, in statements of 1,000, 100, 10 and 1 rows (src/audit/repository.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RequestEntry } from '../../src/audit/entry.js';
import { AuditWriterThread } from '../../src/audit/writer-thread.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

const folder = mkdtempSync(join(tmpdir(), 'compplan-writer-thread-'));
const config = { dialect: 'sqlite', path: join(folder, 'compplan.sqlite') } as const;
let database: DatabaseHandle;

beforeAll(async () => {
  database = openDatabase(config);
  await migrateToLatest(database);
});
afterAll(async () => {
  await database.close();
  rmSync(folder, { recursive: true, force: true });
});

const entry = (requestId: string): RequestEntry => ({
  at: Date.parse('2026-11-28T06:00:00.000Z'),
  organizationId: 'org_1',
  keyId: 'key_1',
  method: 'GET',
  route: '/ping',
  path: '/ping',
  meritCycleId: null,
  status: 200,
  employees: 0,
  clientAddress: '127.0.0.1',
  userAgent: 'curl/8.5.0',
  requestId,
  columnsServed: null,
  rowSliceId: null,
});

const requestIds = async () =>
  (await database.db.selectFrom('audit_entries').select('request_id').orderBy('id').execute()).map(
    (row) => row.request_id,
  );

it('writes a round of 1,234 entries whole and in order', async () => {
  const writer = new AuditWriterThread(config);
  const ids = Array.from({ length: 1_234 }, (_, index) => `round-${index}`);
  try {
    await writer.write(ids.map(entry), false);
  } finally {
    await writer.close();
  }
  expect((await requestIds()).filter((id) => id?.startsWith('round-'))).toStrictEqual(ids);
});

it('writes what it is handed, and after its thread stops writes the next round in a new one', async () => {
  const writer = new AuditWriterThread(config);
  try {
    const before = await requestIds();
    await writer.write([entry('r1'), entry('r2')], false);
    expect(await requestIds()).toStrictEqual([...before, 'r1', 'r2']);

    const first = writer.worker;
    await first.terminate();
    await writer.write([entry('r3')], false);
    expect(writer.worker).not.toBe(first);
    expect(await requestIds()).toStrictEqual([...before, 'r1', 'r2', 'r3']);
  } finally {
    await writer.close();
  }
  await expect(writer.write([entry('r4')], false)).rejects.toThrow(
    "the audit log's writer thread stopped (exit code 1)",
  );
  expect((await requestIds()).slice(-3)).toStrictEqual(['r1', 'r2', 'r3']);
});
