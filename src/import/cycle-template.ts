// A merit cycle's CSV template (Settings → Data, docs/web-app.md): the header its CSV import
// reads — the employee's own columns, then the cycle's columns from its column schema, as
// `compplan export employees` names them — and one example row written as the import
// reads it with the form's default choices (dates 2025-03-15, amounts 85000.00).
import { readColumnSchema } from '../columns/repository.js';
import type { ColumnDescription } from '../columns/schema.js';
import type { Db } from '../db/connect.js';
import { columnsHeader, csvRow } from '../export/csv.js';
import { findMeritCycleRow } from '../tenancy/cycles.js';
import { readScope } from '../tenancy/scope.js';

const OWN_COLUMNS = [
  'email',
  'firstName',
  'lastName',
  'preferredName',
  'currencyCode',
  'eligibilityStatus',
] as const;

const EXAMPLE_BY_TYPE: Record<string, string> = {
  text: 'Example',
  number: '3',
  date: '2025-03-15',
  boolean: 'TRUE',
  currency: '85000.00',
};

/** The template of the organisation's cycle `cycleId`; undefined when it has none such. */
export async function cycleTemplate(
  db: Db,
  organizationId: string,
  cycleId: string,
): Promise<{ name: string; csv: string } | undefined> {
  const cycle = await findMeritCycleRow(db, readScope(organizationId, null, []), cycleId);
  if (!cycle) return undefined;
  const schema = await readColumnSchema(db, cycle.id);
  return { name: cycle.name, csv: cycleTemplateCsv(cycle.currency, schema) };
}

/** The header and one example row, as CSV. */
export function cycleTemplateCsv(currency: string, schema: readonly ColumnDescription[]): string {
  const columns = columnsHeader(schema);
  const types = new Map<string, string>();
  for (const column of schema) {
    if (column.type === 'composite' && column.parts && column.parts.length > 0) {
      for (const part of column.parts) types.set(`columns.${column.key}.${part.key}`, part.type);
    } else types.set(`columns.${column.key}`, column.type);
  }
  // An empty cell (null): no preferred name; no example for a column of another type.
  const example = [
    'ada@example.com',
    'Ada',
    'Lovelace',
    null,
    currency,
    'Eligible',
    ...columns.map((name) => EXAMPLE_BY_TYPE[types.get(name) ?? 'text'] ?? null),
  ];
  return csvRow([...OWN_COLUMNS, ...columns]) + csvRow(example);
}
