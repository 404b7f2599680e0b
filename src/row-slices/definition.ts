// What a row slice is (docs/api-keys.md, "Slices"): text conditions an employee's columns
// must meet, and a manager whose reporting line the employee must be in. Read from what an
// administrator typed (`--rows`, `--reports-to`, Settings → Connections), kept in one
// canonical form — conditions by column, values sorted — so that two keys with the same
// slice share it, and written back as people read it.
import { KeyManagementError } from '../api-keys/errors.js';
import { byCodePoint } from '../columns/order.js';
import { parse } from './grammar/rows-parser.js';

/** An employee's text column (or a composite column's text part) is one of `values`. */
export interface RowCondition {
  column: string;
  /** The part of a composite column; null for a text column. */
  part: string | null;
  /** Sorted, each once. */
  values: string[];
}

export interface SliceDefinition {
  /** Sorted by column and part, each column (and part) once; all must hold. */
  conditions: RowCondition[];
  /** The manager's email, lower case: the employees whose reporting line reaches them. */
  reportsTo: string | null;
}

/** The most values a slice's conditions hold together (a list past it is an export job). */
export const MAX_SLICE_VALUES = 1_000;
/** The longest value: longer than any department or country name people write. */
export const MAX_VALUE_LENGTH = 200;
const MAX_EMAIL_LENGTH = 320;

interface GrammarError {
  message: string;
  location?: { start: { offset: number } };
}

const HOW =
  'Write each condition as COLUMN = VALUE or COLUMN in (VALUE, VALUE), joined by "and"; put a value with a comma, a parenthesis, a quote or the word "and" in double quotes.';

/** `department` or `employee/jobLevel`. */
export const columnLabel = (condition: { column: string; part: string | null }) =>
  condition.part === null ? condition.column : `${condition.column}/${condition.part}`;

/** The conditions of `--rows` (undefined or blank: none), checked for form, not for data. */
export function parseRows(text: string | undefined): RowCondition[] {
  if (text === undefined || text.trim().length === 0) return [];
  let parsed: { column: { key: string; part: string | null }; values: string[] }[];
  try {
    parsed = parse(text, {}) as typeof parsed;
  } catch (error) {
    const offset = (error as GrammarError).location?.start.offset;
    const at = offset === undefined ? undefined : text[offset];
    // A quote the grammar stops at is one that is never closed (a closed one is read).
    const where =
      offset === undefined || at === undefined
        ? 'it ends too early'
        : (at === '"' || at === "'") && !text.includes(at, offset + 1)
          ? `the quote at character ${offset + 1} is not closed`
          : `at character ${offset + 1}, ${JSON.stringify(text.slice(offset, offset + 20))}`;
    throw new KeyManagementError(`--rows could not be read (${where}). ${HOW}`);
  }
  const conditions = parsed.map(({ column, values }) => ({
    column: column.key,
    part: column.part,
    values,
  }));
  let total = 0;
  const seen = new Set<string>();
  for (const condition of conditions) {
    const label = columnLabel(condition);
    if (condition.column.length === 0 || condition.part === '') {
      throw new KeyManagementError(`--rows names an empty column. ${HOW}`);
    }
    if (condition.values.length === 0) {
      throw new KeyManagementError(
        `--rows: ${label} in () names no value; give at least one, as in ${label} in (A, B)`,
      );
    }
    if (seen.has(label)) {
      throw new KeyManagementError(
        `--rows names ${label} twice: put its values in one condition, as in ${label} in (A, B)`,
      );
    }
    seen.add(label);
    const empty = condition.values.find((value) => value.length === 0);
    if (empty !== undefined) {
      throw new KeyManagementError(`--rows: ${label} has an empty value ""`);
    }
    const long = condition.values.find((value) => value.length > MAX_VALUE_LENGTH);
    if (long !== undefined) {
      throw new KeyManagementError(
        `--rows: a value of ${label} has more than ${MAX_VALUE_LENGTH} characters`,
      );
    }
    const twice = condition.values.find(
      (value, index) => condition.values.indexOf(value) !== index,
    );
    if (twice !== undefined) {
      throw new KeyManagementError(`--rows: ${label} names ${quoted(twice)} twice: give it once`);
    }
    total += condition.values.length;
  }
  if (total > MAX_SLICE_VALUES) {
    throw new KeyManagementError(
      `--rows names ${total.toLocaleString('en')} values; a slice takes at most ${MAX_SLICE_VALUES.toLocaleString('en')}. For a list of people that long, slice by a column they share (a department, a country) or by a manager with --reports-to.`,
    );
  }
  return conditions
    .map((condition) => ({ ...condition, values: [...condition.values].sort(byCodePoint) }))
    .sort((a, b) => byCodePoint(columnLabel(a), columnLabel(b)));
}

/** The manager of `--reports-to` as stored (lower case); undefined or blank: none. */
export function parseReportsTo(text: string | undefined): string | null {
  if (text === undefined || text.trim().length === 0) return null;
  const email = text.trim();
  if (email.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+$/.test(email)) {
    throw new KeyManagementError(
      `--reports-to takes a manager's email, such as ana@example.com; got ${quoted(email)}`,
    );
  }
  return email.toLowerCase();
}

/** The slice of `--rows` and `--reports-to`; null when neither says anything (every employee). */
export function sliceDefinitionOf(input: {
  rows?: string | undefined;
  reportsTo?: string | undefined;
}): SliceDefinition | null {
  const conditions = parseRows(input.rows);
  const reportsTo = parseReportsTo(input.reportsTo);
  if (conditions.length === 0 && reportsTo === null) return null;
  return { conditions, reportsTo };
}

/** The one stored text of a definition: equal exactly for the same slice. */
export const canonicalDefinition = (definition: SliceDefinition): string =>
  JSON.stringify({
    conditions: definition.conditions.map(({ column, part, values }) => ({ column, part, values })),
    reportsTo: definition.reportsTo,
  });

/** A stored definition back. */
export function storedDefinition(text: string): SliceDefinition {
  return JSON.parse(text) as SliceDefinition;
}

// A value or column written bare is read back as the same text: no character the grammar
// reads as punctuation, no space at either end, and not the word "and" among its words.
const BARE = /^[^\s,()"'=/]+(?: [^\s,()"'=/]+)*$/;
const quoted = (text: string) => `"${text.replaceAll('"', '""')}"`;
const written = (text: string) =>
  BARE.test(text) && !/(^| )and( |$)/i.test(text) && !/^in$/i.test(text) ? text : quoted(text);
// A column or part name written bare is one word (the grammar's Name): a key with a space
// is quoted, or `cost center = X` would read as the column `cost`.
const NAME = /^[^\s,()"'=/]+$/;
const writtenName = (text: string) =>
  NAME.test(text) && !/^(and|in)$/i.test(text) ? text : quoted(text);

/**
 * The slice as people read it, in the form `--rows` takes (plus `reports to EMAIL`):
 * `country = DE and department in (Engineering, Sales) and reports to ana@example.com`.
 */
export function describeSlice(definition: SliceDefinition): string {
  const conditions = definition.conditions.map((condition) => {
    const column =
      condition.part === null
        ? writtenName(condition.column)
        : `${writtenName(condition.column)}/${writtenName(condition.part)}`;
    const [only] = condition.values;
    return condition.values.length === 1 && only !== undefined
      ? `${column} = ${written(only)}`
      : `${column} in (${condition.values.map(written).join(', ')})`;
  });
  if (definition.reportsTo !== null) conditions.push(`reports to ${definition.reportsTo}`);
  return conditions.join(' and ');
}

/** The `--rows` part of a description (what the form's field shows again). */
export function describeRows(definition: SliceDefinition): string {
  return describeSlice({ ...definition, reportsTo: null });
}
