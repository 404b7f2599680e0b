// AUDIT_RETENTION_DAYS: `compplan serve` purges the audit log's entries older than the
// retention (when it starts, then every hour); younger entries stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAction } from '../../src/audit/repository.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { importDataSet } from '../../src/import/load.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { startCliServer, stopAllProcesses } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { waitFor } from '../helpers/services/process.js';
import { auditEntriesOf } from './helpers.js';

const DAY = 86_400_000;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await stopAllProcesses();
  await database?.drop();
});

describe('audit log retention', () => {
  it('serve purges the entries older than AUDIT_RETENTION_DAYS and keeps the younger ones', async () => {
    const handle = openDatabase(database.config);
    const entries = async () =>
      (await auditEntriesOf(handle.db, ACME)).map((entry) => entry.target);
    try {
      await migrateToLatest(handle);
      await importDataSet(handle, acmeDataSet());
      const organizationId = (await findOrganizationBySlug(handle.db, ACME))?.id ?? '';
      for (const [target, daysAgo] of [
        ['old', 31],
        ['recent', 29],
      ] as const) {
        await recordAction(handle.db, {
          organizationId,
          action: 'settings.changed',
          actor: { kind: 'cli' },
          target,
          at: new Date(Date.now() - daysAgo * DAY),
        });
      }
      expect(await entries()).toEqual(['old', 'recent', null]);
      const config = database.config;
      const server = await startCliServer([], {
        DATABASE_URL: config.dialect === 'sqlite' ? `sqlite:${config.path}` : config.url,
        AUDIT_RETENTION_DAYS: '30',
      });
      await waitFor(async () => !(await entries()).includes('old'), 10_000, 'the purge');
      expect(await entries()).toEqual(['recent', null]);
      expect((await server.stop()).code).toBe(0);
    } finally {
      await handle.close();
    }
  });
});
