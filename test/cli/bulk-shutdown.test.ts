// SIGTERM during bulk downloads (docs/bulk-download.md): `compplan serve` as operators run
// it, a real process. A download whose client keeps reading is finished whole; one whose
// client has stopped reading is cut off once the shutdown's grace for downloads is over
// (its client sees a response that did not end, never a complete one); the server then
// exits 0, well within its 10 s shutdown grace.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { importDataSet } from '../../src/import/load.js';
import {
  WIDE_CYCLE,
  WIDE_EMPLOYEES,
  WIDE_ORG,
  wideCycleDataSet,
} from '../fixtures/bulk-data-sets.js';
import { employeesPath } from '../helpers/api-expectations.js';
import { pausedDownload } from '../helpers/paused-download.js';
import { startCompplan } from '../helpers/services/compplan.js';

const bulkPath = `${employeesPath(WIDE_CYCLE)}/bulk`;

describe('SIGTERM during bulk downloads', () => {
  let dir: string;
  let keys: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'compplan-bulk-shutdown-'));
    const database = openDatabase({ dialect: 'sqlite', path: join(dir, 'compplan.db') });
    await migrateToLatest(database);
    await importDataSet(database, wideCycleDataSet('v1'), { changeRetentionDays: 30 });
    keys = [];
    for (const name of ['reader', 'stalled']) {
      keys.push((await createApiKey(database.db, { org: WIDE_ORG, name }, Date.now())).key);
    }
    await database.close();
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finishes a download that is read, cuts off one that is not, and exits 0', async () => {
    const server = await startCompplan({ DATABASE_URL: `sqlite:${join(dir, 'compplan.db')}` });
    try {
      const [reader, stalled] = keys as [string, string];
      const reading = await pausedDownload(`${server.url}${bulkPath}`, { 'x-api-key': reader });
      const stalling = await pausedDownload(`${server.url}${bulkPath}`, { 'x-api-key': stalled });
      const exited = server.stop();
      // The reading client goes on a moment after the signal.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const read = await reading.rest();
      expect('body' in read && read.body.trimEnd().split('\n')).toHaveLength(WIDE_EMPLOYEES);
      // The server exits once the stalled download is cut off; its client, reading only
      // now, gets what was sent and then an error, not the end of a complete response.
      expect(await exited).toBe(0);
      expect(await stalling.rest()).toHaveProperty('error');
      expect(server.logs().some((line) => line.msg === 'shut down')).toBe(true);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
