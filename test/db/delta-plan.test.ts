// A delta page is one range scan of the change-order index (docs/delta-sync.md,
// "Cost"): a delta over a few changes of a large cycle reads those changes, not the
// cycle. Checked on the plan of the very statement the endpoint runs, past a position in
// the middle of a walk: the employees are found by the (merit_cycle_id, change_seq, id)
// index of migration 0010 from the position on, with nothing sorted afterwards.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { employeeChangesQuery } from '../../src/modules/deltas/repository.js';
import { readScope } from '../../src/tenancy/scope.js';
import { LARGE_CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import { testDialect } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the plan of a delta page', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dataSets: [largeCycleDataSet(500)] });
  });
  afterAll(() => server.close());

  it('reads employees by one range scan of the change-order index, from the walk position on', async () => {
    const { db } = server.database;
    const org = await db
      .selectFrom('merit_cycles')
      .select('organization_id')
      .where('id', '=', LARGE_CYCLE)
      .executeTakeFirstOrThrow();
    const query = employeeChangesQuery(
      testDialect(),
      readScope(org.organization_id, null, []),
      LARGE_CYCLE,
      {
        from: 0,
        removalsFrom: 0,
        after: [1, 'mce_30000000-0000-4000-8000-000000000100'],
        limit: 100,
      },
    );
    if (testDialect() === 'sqlite') {
      const { rows } = await sql<{ detail: string }>`explain query plan ${query}`.execute(db);
      const details = rows.map((row) => row.detail);
      expect(details).toContain(
        'SEARCH merit_cycle_employees USING INDEX merit_cycle_employees_changes (merit_cycle_id=? AND (change_seq,id)>(?,?))',
      );
      expect(details).toContain(
        'SEARCH removed_employees USING COVERING INDEX removed_employees_changes (merit_cycle_id=? AND (change_seq,id)>(?,?))',
      );
      expect(details.filter((detail) => detail.includes('TEMP B-TREE'))).toStrictEqual([]);
    } else {
      // On a table this small PostgreSQL would rather read it all; told not to, the plan
      // shows that the index answers the page's condition itself.
      const plan = await db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
      expect(plan).toMatch(
        /Index Scan using merit_cycle_employees_changes on merit_cycle_employees/,
      );
      expect(plan).toMatch(
        /Index Cond: \(\(merit_cycle_id = .*\) AND \(ROW\(change_seq, id\) > ROW\(/,
      );
    }
  });
});
