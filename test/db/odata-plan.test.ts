// A page of the OData feed is planned for its values each time (src/db/statement-cache.ts,
// PLANNED_EACH_TIME): it is never sent as a prepared statement, whose plan PostgreSQL
// keeps for any values after five runs and which, for a feed page, joined every employee
// of the cycle and sorted them. Checked on the very statement the feed sends: it gets no
// statement name, and the plan for its values reads the employees' list-order index in
// order, sorting nothing; and a walk of many pages still serves every employee once.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementNames } from '../../src/db/statement-cache.js';
import { pageSql } from '../../src/odata/repository.js';
import { sourceOf } from '../../src/odata/sources.js';
import { readScope } from '../../src/tenancy/scope.js';
import { ACME, LARGE_CYCLE, largeCycleDataSet } from '../fixtures/data-sets.js';
import { testDialect } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const EMPLOYEES = 500;

describe('the plan of an OData feed page', () => {
  let server: TestServer;
  let organizationId: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [largeCycleDataSet(EMPLOYEES)] });
    const org = await server.database.db
      .selectFrom('merit_cycles')
      .select('organization_id')
      .where('id', '=', LARGE_CYCLE)
      .executeTakeFirstOrThrow();
    organizationId = org.organization_id;
  });
  afterAll(() => server.close());

  it('is sent unnamed, and planned for its values reads the list-order index in order', async () => {
    const { db } = server.database;
    const source = sourceOf('Employees', testDialect(), readScope(organizationId, null, []));
    const page = pageSql(
      source,
      { filter: null, order: source.nativeOrder, after: null, offset: 0, limit: 1_001 },
      null,
      null,
    );
    const names = statementNames();
    expect(names(page.compile(db).sql)).toBeUndefined();
    expect(names('select 1')).toMatch(/^compplan_/);

    if (testDialect() === 'sqlite') {
      const { rows } = await sql<{ detail: string }>`explain query plan ${page}`.execute(db);
      const details = rows.map((row) => row.detail);
      expect(details.some((detail) => /^SEARCH e USING (PRIMARY KEY|INDEX)/.test(detail))).toBe(
        true,
      );
      expect(details.filter((detail) => detail.includes('TEMP B-TREE'))).toStrictEqual([]);
    } else {
      // Statistics as autovacuum keeps them; and on a table this small PostgreSQL would
      // rather read it all: told not to, the plan shows how the index answers the page.
      await sql`analyze merit_cycle_employees`.execute(db);
      const plan = await db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${page}`.execute(trx);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
      expect(plan).toMatch(
        /Index Scan using merit_cycle_employees_page on merit_cycle_employees e/,
      );
      expect(plan).not.toMatch(/Sort/);
    }
  });

  it('serves every employee once over many pages (past the runs after which a prepared statement is planned once)', async () => {
    const key = await server.createKey(ACME);
    const seen: string[] = [];
    let url: string | undefined = `${server.url}/odata/v4/Employees?$select=id`;
    while (url) {
      const response = await fetch(url, {
        headers: { 'x-api-key': key, prefer: 'odata.maxpagesize=25' },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        value: { id: string }[];
        '@odata.nextLink'?: string;
      };
      seen.push(...body.value.map((employee) => employee.id));
      url = body['@odata.nextLink'];
    }
    expect(seen).toHaveLength(EMPLOYEES);
    expect(new Set(seen).size).toBe(EMPLOYEES);
  });
});
