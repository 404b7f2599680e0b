// An import leaves PostgreSQL ready for the reads that follow it (src/import/settle.ts):
// the tables it wrote employees into vacuumed — every page all-visible, so that the first
// read after it sets no hint bits and dirties no page — and analysed. A check, which
// writes nothing, and an import that changes nothing leave them as they were.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LARGE_CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface TableState {
  pages: number;
  allVisible: number;
  vacuums: number;
  analyses: number;
}

describe('an import on PostgreSQL settles the rows it wrote', () => {
  let database: TestDatabase;
  let server: TestServer;
  beforeAll(async () => {
    // The test cluster commits asynchronously (test/helpers/services/postgres.ts), and
    // VACUUM leaves a page's rows unmarked until their commit is on disk: this database
    // commits as a production one does.
    database = await createTestDatabase();
    const { config } = database;
    if (config.dialect !== 'postgres') throw new Error('a PostgreSQL test');
    server = await startTestServer({
      database: { ...config, url: `${config.url}?options=-c%20synchronous_commit%3Don` },
    });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  const state = async (table: string): Promise<TableState> => {
    const { rows } = await sql<Record<keyof TableState, string>>`
      select c.relpages as pages, c.relallvisible as "allVisible",
             s.vacuum_count as vacuums, s.analyze_count as analyses
        from pg_class c join pg_stat_user_tables s on s.relid = c.oid
       where c.relname = ${table}`.execute(server.database.db);
    const row = rows[0];
    if (!row) throw new Error(`no table ${table}`);
    return {
      pages: Number(row.pages),
      allVisible: Number(row.allVisible),
      vacuums: Number(row.vacuums),
      analyses: Number(row.analyses),
    };
  };

  it('vacuums and analyses merit_cycle_employees and row_slice_members after an import that wrote employees, and not after one that changed nothing', async () => {
    const before = await state('merit_cycle_employees');
    await server.load(largeCycleDataSet(3_000));
    const after = await state('merit_cycle_employees');
    expect(after.vacuums).toBe(before.vacuums + 1);
    expect(after.analyses).toBe(before.analyses + 1);
    expect(after.pages).toBeGreaterThan(50);
    expect(after.allVisible).toBe(after.pages);
    const members = await state('row_slice_members');
    expect(members.vacuums).toBeGreaterThan(0);

    // The same data set again: nothing written, nothing to settle.
    const summary = await server.load(largeCycleDataSet(3_000));
    expect(summary.employees).toMatchObject({ created: 0, updated: 0, removed: 0 });
    expect(await state('merit_cycle_employees')).toEqual(after);
    const { rows } = await sql<{ count: string }>`
      select count(*) as count from merit_cycle_employees where merit_cycle_id = ${LARGE_CYCLE}`.execute(
      server.database.db,
    );
    expect(Number(rows[0]?.count)).toBe(3_000);
  });
});
