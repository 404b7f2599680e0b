// Migrations that change what is stored, applied to a database with data in it: the API
// serves the same answers on each side of them, and going down restores what was dropped.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migratorOf } from '../../src/db/migrate.js';
import { ACME, acmeDataSet, globexDataSet } from '../fixtures/data-sets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer } from '../helpers/server.js';
import { apiSnapshot } from '../helpers/snapshot.js';

describe('migration 0004: an employee’s columns stored only in its body', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  /** The API as a new server on the database serves it (nothing cached from before). */
  async function servedToAcme() {
    const server = await startTestServer({ database: database.config });
    try {
      return await apiSnapshot(server, await server.createKey(ACME, 'migration check'));
    } finally {
      await server.close();
    }
  }

  async function employeeColumns(server: Awaited<ReturnType<typeof startTestServer>>) {
    const columns = await server.database.db.introspection.getTables();
    return columns
      .find((table) => table.name === 'merit_cycle_employees')
      ?.columns.map((c) => c.name);
  }

  it('down adds `columns` back, filled from each body; up drops it again; the API serves the same', async () => {
    const server = await startTestServer({
      database: database.config,
      dataSets: [acmeDataSet(), globexDataSet()],
    });
    let before: Awaited<ReturnType<typeof apiSnapshot>>;
    try {
      before = await apiSnapshot(server, await server.createKey(ACME, 'before'));
      expect(await employeeColumns(server)).not.toContain('columns');

      const down = await migratorOf(server.database).migrateDown();
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
        ['0004-columns-only-in-body', 'Down', 'Success'],
      ]);
      const { rows } = await sql<{ columns: string; body: string }>`
        select columns, body from merit_cycle_employees`.execute(server.database.db);
      expect(rows.length).toBeGreaterThan(10);
      for (const row of rows) {
        expect(JSON.parse(row.columns)).toStrictEqual(JSON.parse(row.body).columns);
      }

      expect(await migrateToLatest(server.database)).toEqual(['0004-columns-only-in-body']);
      expect(await employeeColumns(server)).not.toContain('columns');
    } finally {
      await server.close();
    }
    expect(await servedToAcme()).toStrictEqual(before);
  });
});
