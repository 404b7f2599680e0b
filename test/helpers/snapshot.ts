// Whole-state snapshots for before/after comparisons: everything the API serves to one
// key, and every row of every table.
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import type { TestServer } from './server.js';

const CYCLES = '/v1/compensationPlanning/meritCycles';

async function json(server: TestServer, key: string, path: string): Promise<unknown> {
  const response = await server.request(path, { key });
  if (response.status !== 200) {
    throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  }
  return response.json();
}

/** Walks a list endpoint to its end; returns every item, in order. */
export async function listAll(server: TestServer, key: string, path: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&nextCursor=${encodeURIComponent(cursor)}`;
    const page = (await json(server, key, `${path}?limit=100${query}`)) as {
      data: unknown[];
      nextCursor: string | null;
    };
    items.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

export interface ApiSnapshot {
  meritCycles: { id: string }[];
  byId: Record<string, { cycle: unknown; exchangeRates: unknown; employees: unknown[] }>;
}

/** Everything the API serves to `key`: the cycle list, each cycle, its rates and employees. */
export async function apiSnapshot(server: TestServer, key: string): Promise<ApiSnapshot> {
  const meritCycles = (await listAll(server, key, CYCLES)) as { id: string }[];
  const byId: ApiSnapshot['byId'] = {};
  for (const { id } of meritCycles) {
    byId[id] = {
      cycle: await json(server, key, `${CYCLES}/${id}`),
      exchangeRates: await json(server, key, `${CYCLES}/${id}/exchangeRates`),
      employees: await listAll(server, key, `${CYCLES}/${id}/employees`),
    };
  }
  return { meritCycles, byId };
}

/** Every row of every table (migration bookkeeping included), each table's rows in a stable order. */
export async function dumpTables(db: Db): Promise<Record<string, unknown[]>> {
  const dump: Record<string, unknown[]> = {};
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  for (const table of tables.map(({ name }) => name).sort()) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(
      db,
    );
    dump[table] = inStableOrder(comparable(table, rows));
  }
  return dump;
}

/**
 * A table's rows without what is written whatever a change does, so that "changes nothing"
 * can be compared: a cycle's count without when, by whom and with what counts it was last
 * imported (every import records that, even one that changes nothing: Settings → Data shows
 * it), and the audit log without its entries of imports and of API requests (every import
 * is recorded, and a snapshot's own requests are; test/audit checks what is recorded). Its
 * other management actions stay in.
 */
export function comparable(table: string, rows: unknown[]): unknown[] {
  if (table === 'audit_entries') {
    return (rows as { action: string }[]).filter(
      ({ action }) => action !== 'import' && action !== 'api.request',
    );
  }
  if (table !== 'merit_cycle_imports') return rows;
  return (rows as Record<string, unknown>[]).map(
    ({ imported_at: _at, imported_by: _by, employees: _counts, ...kept }) => kept,
  );
}

/** Rows sorted by their JSON text: an order that does not depend on how a table is stored. */
export function inStableOrder(rows: readonly unknown[]): unknown[] {
  return rows
    .map((row) => JSON.stringify(row))
    .sort()
    .map((row) => JSON.parse(row) as unknown);
}

/** Row counts of every table. */
export async function countRows(db: Db): Promise<Record<string, number>> {
  const dump = await dumpTables(db);
  return Object.fromEntries(Object.entries(dump).map(([table, rows]) => [table, rows.length]));
}
