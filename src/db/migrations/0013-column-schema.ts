// The column schema of each merit cycle (docs/import-format.md, "Column types"): one row a
// cycle, its columns as JSON text (key, name, type, parts), written by the import, so that
// the schema endpoint and the CSV export read one small row instead of every employee.
// JSON text because column keys and names are any JSON string (U+0000 and lone surrogates
// included), which a text column of PostgreSQL cannot hold and JSON escapes.
//
// Cycles stored before this migration get their schema from their employees' stored
// columns: for each key the name and type most employees give it (a key with two, which
// the import no longer accepts, is described by the more frequent; ties by code point),
// and a composite's parts as the parts seen, `currency` for an object part and `text`
// for a string (telling decimals and dates apart would need each value; the next import
// that lists every employee of the cycle describes them from the values). Stored values
// are left exactly as they were loaded, even where they break the rules the import now
// checks (a `number` kept as a JSON number): what the API serves does not change under a
// migration, and no change is announced to delta readers or webhooks for it.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

/** A column as this migration stores it: the JSON of the merit_cycle_columns row. */
interface ColumnDescription {
  key: string;
  name: string;
  type: string;
  parts: { key: string; type: 'text' | 'currency' }[] | null;
}

interface ColumnRow {
  merit_cycle_id: string;
  organization_id: string;
  key: string;
  name: string | null;
  type: string | null;
  employees: number | string;
}

interface PartRow {
  merit_cycle_id: string;
  key: string;
  part: string;
  kind: string;
}

export function columnSchema(dialect: Dialect) {
  // The stored bodies' columns, one row per employee and column: SQLite's json_each over
  // the text, PostgreSQL's over the text read as json.
  const columns =
    dialect === 'postgres'
      ? sql`merit_cycle_employees e cross join lateral json_each(e.body::json -> 'columns') c`
      : sql`merit_cycle_employees e, json_each(e.body, '$.columns') c`;
  const field = (name: string) =>
    dialect === 'postgres' ? sql.raw(`c.value ->> '${name}'`) : sql.raw(`c.value ->> '$.${name}'`);
  const parts =
    dialect === 'postgres'
      ? // A case, not a condition after it: json_each of a scalar fails, and PostgreSQL may
        // call it before it filters.
        sql`cross join lateral json_each(case when json_typeof(c.value -> 'value') = 'object'
              then c.value -> 'value' else '{}'::json end) p where true`
      : sql`, json_each(c.value, '$.value') p where json_type(c.value, '$.value') = 'object'`;
  const partKind =
    dialect === 'postgres'
      ? sql`case when json_typeof(p.value) = 'object' then 'currency' else 'text' end`
      : sql`case when p.type = 'object' then 'currency' else 'text' end`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('merit_cycle_columns')
        .addColumn('merit_cycle_id', 'text', (c) =>
          c.primaryKey().references('merit_cycles.id').onDelete('cascade'),
        )
        .addColumn('organization_id', 'text', (c) => c.notNull())
        // JSON array of {key, name, type, parts}, ordered by key (code point).
        .addColumn('columns', 'text', (c) => c.notNull())
        .execute();

      const found = await sql<ColumnRow>`
        select e.merit_cycle_id, e.organization_id, c.key as key,
               ${field('name')} as name, ${field('type')} as type, count(*) as employees
          from ${columns}
         group by e.merit_cycle_id, e.organization_id, c.key, ${field('name')}, ${field('type')}`.execute(
        db,
      );
      const partsFound = await sql<PartRow>`
        select distinct e.merit_cycle_id, c.key as key, p.key as part, ${partKind} as kind
          from ${columns} ${parts} and ${field('type')} = 'composite'`.execute(db);

      const cycles = new Map<string, { organizationId: string; columns: Map<string, ColumnRow> }>();
      for (const row of found.rows) {
        const cycle = cycles.get(row.merit_cycle_id) ?? {
          organizationId: row.organization_id,
          columns: new Map<string, ColumnRow>(),
        };
        cycles.set(row.merit_cycle_id, cycle);
        const best = cycle.columns.get(row.key);
        if (!best || isMoreFrequent(row, best)) cycle.columns.set(row.key, row);
      }
      const partsOf = new Map<string, Map<string, 'text' | 'currency'>>();
      for (const row of partsFound.rows) {
        const at = `${row.merit_cycle_id}\u0000${row.key}`;
        const known = partsOf.get(at) ?? new Map<string, 'text' | 'currency'>();
        partsOf.set(at, known);
        // A part of both kinds (which the import no longer accepts) is described as text.
        known.set(
          row.part,
          known.has(row.part) && known.get(row.part) !== row.kind
            ? 'text'
            : (row.kind as 'text' | 'currency'),
        );
      }
      for (const [meritCycleId, cycle] of cycles) {
        const described: ColumnDescription[] = [...cycle.columns.values()]
          .map((row) => {
            const type = row.type ?? '';
            const parts = partsOf.get(`${meritCycleId}\u0000${row.key}`) ?? new Map();
            return {
              key: row.key,
              name: row.name ?? '',
              type,
              parts:
                type === 'composite'
                  ? [...parts.entries()]
                      .map(([key, partType]) => ({ key, type: partType }))
                      .sort((a, b) => byCodePoint(a.key, b.key))
                  : null,
            };
          })
          .sort((a, b) => byCodePoint(a.key, b.key));
        await db
          .insertInto('merit_cycle_columns' as never)
          .values({
            merit_cycle_id: meritCycleId,
            organization_id: cycle.organizationId,
            columns: JSON.stringify(described),
          } as never)
          .execute();
      }
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('merit_cycle_columns').execute();
    },
  };
}

/** The variant of a key more employees give; ties by type, then name, by code point. */
function isMoreFrequent(row: ColumnRow, best: ColumnRow): boolean {
  const difference = Number(row.employees) - Number(best.employees);
  if (difference !== 0) return difference > 0;
  return (
    byCodePoint(row.type ?? '', best.type ?? '') < 0 ||
    (row.type === best.type && byCodePoint(row.name ?? '', best.name ?? '') < 0)
  );
}

/** Compares strings by code point, the order of every database (src/columns/order.ts's
 * byCodePoint as it was when this migration was written). */
function byCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a.codePointAt(index) as number;
    const y = b.codePointAt(index) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) index++;
  }
  return a.length - b.length;
}
