// Each employee's line of the flat CSV, written by the import beside its JSON text
// (src/export/flat-line.ts, docs/bulk-download.md "Lines made at import"): a download of the
// flat CSV sends it as stored instead of parsing the JSON text again for every row, which
// cost about 10 µs an employee, ten seconds a million. `flat_key` names the layout the
// line was written against (the employee's own columns and its cycle's currency); a
// download sends the line only when its own layout has that key. Null for an employee
// stored before (or one that keeps no line): converted from its JSON text as before.
// A sliced key's members carry them too, as they carry the text.
import type { Kysely } from 'kysely';

const TABLES = ['merit_cycle_employees', 'row_slice_members'] as const;

export function flatLines() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const table of TABLES) {
        await db.schema.alterTable(table).addColumn('flat_key', 'text').execute();
        await db.schema.alterTable(table).addColumn('flat_line', 'text').execute();
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of TABLES) {
        await db.schema.alterTable(table).dropColumn('flat_line').execute();
        await db.schema.alterTable(table).dropColumn('flat_key').execute();
      }
    },
  };
}
