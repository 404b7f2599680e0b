// Which columns a key may hide (docs/api-keys.md, "Least privilege"): the column keys of the
// organisation's data, as the column schemas of its cycles name them (§7), and the six
// column types. A key nobody's data has is refused with the closest known keys, because a
// key that hides `salary` where the salaries are `basePay` hides nothing and says it does.
// The web form's column picker is built from columnChoicesOf, the same list.
import { byCodePoint } from '../columns/order.js';
import type { ColumnDescription } from '../columns/schema.js';
import { COLUMN_TYPES } from '../columns/types.js';
import type { Db } from '../db/connect.js';
import { findOrganizationBySlug } from '../tenancy/organizations.js';
import { KeyManagementError } from './errors.js';
import { MAX_LIST_ITEMS } from './restrictions.js';

const MAX_COLUMN_KEY_LENGTH = 200;
/** At most this many suggestions for a key that does not exist. */
const MAX_SUGGESTIONS = 3;

/**
 * A column of the organisation's data as a cycle's column schema describes it (§7): key,
 * display name, type, and for a composite column its parts (united over the cycles).
 */
export type ColumnChoice = ColumnDescription;

/** The organisation's columns of one type, for the web form's picker. */
export interface ColumnGroup {
  type: string;
  columns: ColumnChoice[];
}

/**
 * Every column of every merit cycle of the organisation, by key (a key with another type in
 * another cycle is listed once per type), in key order; composite parts united.
 */
export async function organizationColumns(db: Db, organizationId: string): Promise<ColumnChoice[]> {
  const rows = await db
    .selectFrom('merit_cycle_columns')
    .select('columns')
    .where('organization_id', '=', organizationId)
    .orderBy('merit_cycle_id')
    .execute();
  const byKeyAndType = new Map<string, ColumnChoice>();
  for (const row of rows) {
    for (const column of JSON.parse(row.columns) as ColumnDescription[]) {
      const id = JSON.stringify([column.key, column.type]);
      const known = byKeyAndType.get(id);
      if (!known) {
        byKeyAndType.set(id, {
          key: column.key,
          name: column.name,
          type: column.type,
          parts: column.parts?.map((part) => ({ ...part })) ?? null,
        });
      } else if (known.parts && column.parts) {
        for (const part of column.parts) {
          if (!known.parts.some((seen) => seen.key === part.key)) known.parts.push({ ...part });
        }
      }
    }
  }
  const byKey = (a: { key: string }, b: { key: string }) => byCodePoint(a.key, b.key);
  return [...byKeyAndType.values()]
    .map((column) => ({ ...column, parts: column.parts?.sort(byKey) ?? null }))
    .sort((a, b) => byKey(a, b) || byCodePoint(a.type, b.type));
}

/**
 * The organisation's columns grouped by type, for Settings → Connections' picker: the six
 * types in their documented order (only those that have columns), then any other type.
 */
export async function columnChoicesOf(db: Db, org: string): Promise<ColumnGroup[]> {
  const organization = await findOrganizationBySlug(db, org);
  if (!organization) throw new KeyManagementError(`No organisation with slug "${org}"`);
  const columns = await organizationColumns(db, organization.id);
  const types = [...new Set(columns.map((column) => column.type))].sort((a, b) => {
    const rank = (type: string) => {
      const index = (COLUMN_TYPES as readonly string[]).indexOf(type);
      return index === -1 ? COLUMN_TYPES.length : index;
    };
    return rank(a) - rank(b) || byCodePoint(a, b);
  });
  return types.map((type) => ({
    type,
    columns: columns.filter((column) => column.type === type),
  }));
}

/** `basePay (Base Pay, currency)`. */
const described = (column: ColumnChoice) => `${column.key} (${column.name}, ${column.type})`;

/** Lower case letters and digits only: `Base Pay`, `base_pay` and `basePay` read alike. */
const folded = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/** The Levenshtein distance of two strings (by UTF-16 unit; keys are short). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        substitution,
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

// Words people type for a compensation column, and the words its key or name may use
// instead: `salary` is nowhere near `basePay` by spelling, but it is what `basePay` means.
const MEANINGS: readonly (readonly string[])[] = [
  ['salary', 'salaries', 'wage', 'wages', 'pay', 'basepay', 'base', 'income', 'earnings'],
  ['bonus', 'bonuses', 'incentive', 'commission', 'variable'],
  ['level', 'grade', 'joblevel'],
  ['title', 'jobtitle', 'role', 'position', 'job'],
  ['department', 'dept', 'team', 'division', 'unit'],
  ['ratio', 'comparatio', 'compa', 'penetration'],
];

/** The words of a key or name: `compBandMinBasePay` → comp, band, min, base, pay. */
const wordsOf = (text: string) =>
  text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);

/**
 * How far `typed` is from a column, 0 (the same) to 1 (nothing alike): the edit distance to
 * its key or to its name, whichever is nearer, over the longer length; a key or name that
 * holds what was typed (or the other way round) is near, and so is one whose words mean
 * what the typed word means.
 */
function remoteness(typed: string, column: ColumnChoice): number {
  const word = folded(typed);
  let best = 1;
  for (const candidate of [folded(column.key), folded(column.name)]) {
    if (candidate.length === 0 || word.length === 0) continue;
    best = Math.min(best, distance(word, candidate) / Math.max(word.length, candidate.length));
    if (word.length >= 3 && (candidate.includes(word) || word.includes(candidate))) {
      best = Math.min(best, 0.2);
    }
  }
  const meaning = MEANINGS.find((group) => group.includes(word));
  if (meaning) {
    const words = new Set([...wordsOf(column.key), ...wordsOf(column.name)]);
    // The fewer other words, the nearer: basePay before compBandMinBasePay.
    if (meaning.some((synonym) => words.has(synonym))) {
      best = Math.min(best, 0.25 + 0.01 * words.size);
    }
  }
  return best;
}

/** Near enough to be suggested. */
const NEAR = 0.4;
/** Suggestions this much further than the nearest are left out. */
const ALIKE = 0.02;

/**
 * The columns to suggest for a key that does not exist: the nearest (remoteness), at most
 * three; when none is near, the organisation's currency and number columns, what a key
 * meant to hide pay most likely wants.
 */
export function suggestionsFor(
  typed: string,
  columns: readonly ColumnChoice[],
): { near: boolean; columns: ColumnChoice[] } {
  const ranked = columns
    .map((column) => ({ column, remoteness: remoteness(typed, column) }))
    .filter((entry) => entry.remoteness <= NEAR)
    .sort(
      (a, b) =>
        a.remoteness - b.remoteness ||
        a.column.key.length - b.column.key.length ||
        (a.column.key < b.column.key ? -1 : 1),
    );
  const best = ranked[0]?.remoteness;
  if (best !== undefined) {
    // Only those about as near as the nearest: `salary` is basePay, not also the bands'
    // compBandMinBasePay, whose extra words make it a worse guess.
    const nearest = ranked.filter((entry) => entry.remoteness <= best + ALIKE);
    return { near: true, columns: nearest.slice(0, MAX_SUGGESTIONS).map((entry) => entry.column) };
  }
  return {
    near: false,
    columns: columns.filter((column) => column.type === 'currency' || column.type === 'number'),
  };
}

const oneOf = (items: readonly string[]) =>
  items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

/**
 * What `employee/jobLevel` names when `employee` is a composite column with a part
 * `jobLevel`: a part, which a key cannot hide alone (docs/api-keys.md); undefined otherwise.
 */
function partMessage(typed: string, columns: readonly ColumnChoice[]): string | undefined {
  const slash = typed.indexOf('/');
  if (slash <= 0 || columns.some((column) => column.key === typed)) return undefined;
  const composite = columns.find(
    (column) => column.key === typed.slice(0, slash) && column.parts !== null,
  );
  const part = composite?.parts?.find((p) => p.key === typed.slice(slash + 1));
  if (!composite || !part) return undefined;
  return `${typed} is the ${part.type} part ${part.key} of the composite column ${described(composite)}: a key hides whole columns, so hide ${composite.key}, or every column and part of a type with --hide-column-types ${part.type}.`;
}

/** Why `typed` names no column of the organisation, and what it might have meant. */
function unknownColumnMessage(
  typed: string,
  columns: readonly ColumnChoice[],
  organization: string,
): string {
  if (columns.length === 0) {
    return `no column ${typed}: ${organization} has no columns yet.`;
  }
  const { near, columns: suggested } = suggestionsFor(typed, columns);
  if (near) return `no column ${typed}; did you mean ${oneOf(suggested.map(described))}?`;
  if (suggested.length === 0) {
    return `no column ${typed}, and ${organization} has no currency or number column.`;
  }
  return `no column ${typed}; ${organization}'s currency and number columns are ${oneOf(suggested.map(described))}.`;
}

/**
 * The column keys a key hides: undefined (not given) is none; otherwise at least one, each
 * given once, each a column of the organisation's data — unless `allowUnknown` says they
 * are meant for data still to come. Sorted.
 */
export async function hiddenColumnsOf(
  db: Db,
  organization: { id: string; slug: string },
  keys: readonly string[] | undefined,
  allowUnknown = false,
): Promise<string[]> {
  if (keys === undefined) return [];
  if (keys.length === 0) {
    throw new KeyManagementError('--hide-columns needs at least one column key');
  }
  if (keys.length > MAX_LIST_ITEMS) {
    throw new KeyManagementError(`--hide-columns takes at most ${MAX_LIST_ITEMS} column keys`);
  }
  const empty = keys.find((key) => key.trim().length === 0);
  if (empty !== undefined) {
    throw new KeyManagementError('--hide-columns has an empty column key');
  }
  const tooLong = keys.find((key) => key.length > MAX_COLUMN_KEY_LENGTH);
  if (tooLong !== undefined) {
    throw new KeyManagementError(
      `--hide-columns: a column key has at most ${MAX_COLUMN_KEY_LENGTH} characters`,
    );
  }
  const twice = keys.find((key, index) => keys.indexOf(key) !== index);
  if (twice !== undefined) {
    throw new KeyManagementError(`--hide-columns names ${twice} twice: give each column once`);
  }
  const columns = await organizationColumns(db, organization.id);
  // A part is refused even for data still to come: hidden as a column key, it hides nothing.
  const parts = keys.flatMap((key) => partMessage(key, columns) ?? []);
  const known = new Set(columns.map((column) => column.key));
  const unknown = allowUnknown
    ? []
    : keys.filter((key) => !known.has(key) && partMessage(key, columns) === undefined);
  const problems = [
    ...parts,
    ...unknown.map((key) => unknownColumnMessage(key, columns, organization.slug)),
  ].map((problem, index) => (index === 0 ? problem : `Also, ${problem}`));
  problems.push(
    ...(unknown.length > 0
      ? ['To hide a column of data still to come, add --allow-unknown-columns.']
      : []),
  );
  if (problems.length > 0) {
    throw new KeyManagementError(`--hide-columns: ${problems.join(' ')}`);
  }
  return [...keys].sort();
}

/** The column types a key hides: undefined (not given) is none; otherwise some of the six. */
export function hiddenColumnTypesOf(types: readonly string[] | undefined): string[] {
  if (types === undefined) return [];
  const known = COLUMN_TYPES as readonly string[];
  if (types.length === 0) {
    throw new KeyManagementError(
      `--hide-column-types needs at least one column type: ${known.join(', ')}`,
    );
  }
  const unknown = types.find((type) => !known.includes(type));
  if (unknown !== undefined) {
    throw new KeyManagementError(
      `--hide-column-types: no column type ${unknown}; the types are ${known.join(', ')}`,
    );
  }
  const twice = types.find((type, index) => types.indexOf(type) !== index);
  if (twice !== undefined) {
    throw new KeyManagementError(`--hide-column-types names ${twice} twice: give each type once`);
  }
  return [...types].sort();
}
