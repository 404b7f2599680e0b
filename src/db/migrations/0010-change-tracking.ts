// Change tracking (docs/delta-sync.md): what a delta walk reads.
//
// - Every organisation counts its changes (`change_seq`): an import or a cycle removal
//   gives every row it creates, changes or removes a stamp of its own above the counter,
//   under the organisation's import lock, and advances the counter to its last stamp.
//   Imports of one organisation never overlap, so the stamps become visible in order: a
//   reader that sees a counter value sees every row stamped with it or less
//   (src/changes/change.ts).
// - Merit cycles and employees carry the stamp of their last change, and an index in
//   change order — (scope, change_seq, id) — so that a delta page is one range scan.
//   Rows stored before this migration carry 0: the first walk (no token) reads from -1.
// - A merit cycle also keeps the stamp of its creation: a token older than that was
//   issued for an earlier cycle of the same id (removed, then imported again).
// - Removals leave tombstones, two small tables in the same change order, purged after
//   CHANGE_RETENTION_DAYS; `purged_change_seq` is the newest stamp purged, below which a
//   token can no longer be answered (410).
//
// A tombstone is keyed by where the item was removed from (an id removed from one cycle
// may be imported into another later, and is still removed from the first). Tombstones
// reference nothing: a removed cycle's row is gone, and its employees' tombstones are
// deleted with it (the cycle's own tombstone stands for them: its employee delta is 404).
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function changeTracking(dialect: Dialect) {
  const timestamp = dialect === 'postgres' ? sql`timestamptz(3)` : sql`text`;
  const stamp = dialect === 'postgres' ? sql`bigint` : sql`integer`;
  // Ids order ties within one stamp by code point, as every list does (migration 0001).
  const sortText = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
  const stamped: [table: string, column: string][] = [
    ['organizations', 'change_seq'],
    ['organizations', 'purged_change_seq'],
    ['merit_cycles', 'change_seq'],
    ['merit_cycles', 'created_change_seq'],
    ['merit_cycle_employees', 'change_seq'],
  ];
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const [table, column] of stamped) {
        await db.schema
          .alterTable(table)
          .addColumn(column, stamp, (c) => c.notNull().defaultTo(0))
          .execute();
      }
      await db.schema
        .createIndex('merit_cycles_changes')
        .on('merit_cycles')
        .columns(['organization_id', 'change_seq', 'id'])
        .execute();
      await db.schema
        .createIndex('merit_cycle_employees_changes')
        .on('merit_cycle_employees')
        .columns(['merit_cycle_id', 'change_seq', 'id'])
        .execute();

      await db.schema
        .createTable('removed_merit_cycles')
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('id', sortText, (c) => c.notNull())
        .addColumn('change_seq', stamp, (c) => c.notNull())
        .addColumn('removed_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('removed_merit_cycles_pkey', ['organization_id', 'id'])
        .execute();
      await db.schema
        .createIndex('removed_merit_cycles_changes')
        .on('removed_merit_cycles')
        .columns(['organization_id', 'change_seq', 'id'])
        .execute();

      await db.schema
        .createTable('removed_employees')
        .addColumn('merit_cycle_id', 'text', (c) => c.notNull())
        .addColumn('id', sortText, (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('change_seq', stamp, (c) => c.notNull())
        .addColumn('removed_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('removed_employees_pkey', ['merit_cycle_id', 'id'])
        .execute();
      await db.schema
        .createIndex('removed_employees_changes')
        .on('removed_employees')
        .columns(['merit_cycle_id', 'change_seq', 'id'])
        .execute();
      // The purge (src/changes/removals.ts) deletes an organisation's oldest.
      for (const table of ['removed_merit_cycles', 'removed_employees']) {
        await db.schema
          .createIndex(`${table}_age`)
          .on(table)
          .columns(['organization_id', 'removed_at'])
          .execute();
      }
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('removed_employees').execute();
      await db.schema.dropTable('removed_merit_cycles').execute();
      await db.schema.dropIndex('merit_cycle_employees_changes').execute();
      await db.schema.dropIndex('merit_cycles_changes').execute();
      for (const [table, column] of stamped.toReversed()) {
        await db.schema.alterTable(table).dropColumn(column).execute();
      }
    },
  };
}
