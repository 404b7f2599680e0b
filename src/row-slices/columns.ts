// Which columns a slice (and the organisation's manager column) may name: a text column, or
// the text part of a composite column, of the organisation's data as its cycles' column
// schemas describe it (§7). Anything else is refused with what the column is and the text
// columns there are, because a slice on a column nobody has reads nobody and says it
// reads a department. And the SQL of such a column's value in an employee's stored JSON.

import { type RawBuilder, sql } from 'kysely';
import { type ColumnChoice, organizationColumns, suggestionsFor } from '../api-keys/columns.js';
import { KeyManagementError } from '../api-keys/errors.js';
import type { Db, Dialect } from '../db/connect.js';

/** A column, or a composite column's part, that holds text. */
export interface TextColumn {
  column: string;
  part: string | null;
}

const label = ({ column, part }: TextColumn) => (part === null ? column : `${column}/${part}`);

/** Every text column and text part of the organisation's data, as `key` and `key/part`. */
export function textColumnsOf(columns: readonly ColumnChoice[]): string[] {
  const labels = new Set<string>();
  for (const column of columns) {
    if (column.type === 'text') labels.add(column.key);
    for (const part of column.parts ?? []) {
      if (part.type === 'text') labels.add(`${column.key}/${part.key}`);
    }
  }
  return [...labels];
}

const listed = (labels: readonly string[]) =>
  labels.length === 0
    ? 'it has no text column yet'
    : `its text columns are ${labels.slice(0, 12).join(', ')}${labels.length > 12 ? ', …' : ''}`;

/**
 * Why `wanted` is not a text column or text part of the organisation's data, for `option`;
 * undefined when it is one.
 */
function problemWith(
  wanted: TextColumn,
  columns: readonly ColumnChoice[],
  option: string,
  organization: string,
): string | undefined {
  const named = columns.filter((column) => column.key === wanted.column);
  const texts = textColumnsOf(columns);
  if (named.length === 0) {
    const { near, columns: suggested } = suggestionsFor(wanted.column, columns);
    const text = suggested.filter((column) => column.type === 'text' || column.parts !== null);
    const guess =
      near && text.length > 0 ? `; did you mean ${text.map((c) => c.key).join(' or ')}?` : '';
    return `${option}: ${organization} has no column ${wanted.column}${guess} (${listed(texts)})`;
  }
  if (wanted.part === null) {
    if (named.some((column) => column.type === 'text')) return undefined;
    const composite = named.find((column) => column.parts !== null);
    if (composite) {
      const parts = (composite.parts ?? []).filter((part) => part.type === 'text');
      return `${option}: ${wanted.column} is a composite column; name one of its text parts, such as ${
        parts.map((part) => `${wanted.column}/${part.key}`).join(', ') || `${wanted.column}/PART`
      }`;
    }
    const [column] = named;
    return `${option}: ${wanted.column} is a ${column?.type} column, and a slice reads text columns only (${listed(texts)})`;
  }
  const composite = named.find((column) => column.parts !== null);
  if (!composite) {
    return `${option}: ${wanted.column} is a ${named[0]?.type} column, which has no parts (${listed(texts)})`;
  }
  const part = composite.parts?.find((p) => p.key === wanted.part);
  if (!part) {
    const parts = (composite.parts ?? []).map((p) => p.key).join(', ');
    return `${option}: the composite column ${wanted.column} has no part ${wanted.part} (its parts are ${parts})`;
  }
  if (part.type !== 'text') {
    return `${option}: ${label(wanted)} is a ${part.type} part, and a slice reads text only (${listed(texts)})`;
  }
  return undefined;
}

/** Refuses, all problems at once, any of `wanted` that is not a text column of the data. */
export async function checkTextColumns(
  db: Db,
  organization: { id: string; slug: string },
  wanted: readonly TextColumn[],
  option: string,
): Promise<void> {
  if (wanted.length === 0) return;
  const columns = await organizationColumns(db, organization.id);
  const problems = wanted.flatMap(
    (column) => problemWith(column, columns, option, organization.slug) ?? [],
  );
  if (problems.length > 0) throw new KeyManagementError(problems.join('. Also, '));
}

/** `key` or `key/part` as a TextColumn (a slash in a key is written with --rows' quotes). */
export function textColumnOf(text: string): TextColumn {
  const slash = text.indexOf('/');
  return slash === -1
    ? { column: text, part: null }
    : { column: text.slice(0, slash), part: text.slice(slash + 1) };
}

/** The text of an employee's (`e`) column or part, from its stored JSON; null when not text. */
export function textValueSql(dialect: Dialect, column: TextColumn): RawBuilder<string | null> {
  if (dialect === 'postgres') {
    const json = sql`(e.body::json -> 'columns' -> ${column.column}::text -> 'value')`;
    const value = column.part === null ? json : sql`(${json} -> ${column.part}::text)`;
    return sql`(case when json_typeof(${value}) = 'string' then ${value} #>> '{}' end)`;
  }
  const part = column.part === null ? sql`` : sql` || '.' || json_quote(${column.part})`;
  const path = sql`('$.columns.' || json_quote(${column.column}) || '.value'${part})`;
  return sql`(case when json_type(e.body, ${path}) = 'text' then e.body ->> ${path} end)`;
}
