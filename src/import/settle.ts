// After an import has committed, on PostgreSQL: VACUUM (ANALYZE) of the tables it wrote
// employees into, so that the first reads after it are as fast as any later one. Rows
// just written carry no hint bits and are in no page the visibility map marks all-visible:
// the first read of each (the first bulk download of a cycle of a million employees: twice
// as slow as the next) would otherwise set the bits and dirty every page, and autovacuum
// comes only later, in the middle of whatever reads then. ANALYZE gives the planner the new
// sizes at once. VACUUM skips the pages the visibility map already marks, so after a small
// import of a large table it reads little.
//
// SQLite keeps no such state: nothing to do there.
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { ImportSummary } from './merge.js';

export async function settleImportedRows(
  database: DatabaseHandle,
  summary: ImportSummary,
): Promise<void> {
  if (database.dialect !== 'postgres') return;
  const { created, updated, removed } = summary.employees;
  if (created + updated + removed === 0) return;
  // Outside any transaction (VACUUM runs in none), on the import's own pool. The import has
  // committed: should this fail, autovacuum does the same work later; the import stands.
  await sql`vacuum (analyze) merit_cycle_employees, row_slice_members`
    .execute(database.longDb)
    .catch(() => undefined);
}
