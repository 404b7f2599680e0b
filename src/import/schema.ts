// The import file format (docs/import-format.md), the one statement of its rules.
// Objects are strict: a misspelt field is an error, never silently dropped. Each record
// is validated once, as it arrives, by a record schema below (Root, MeritCycleRecord,
// Employee; intake.ts); records that repeat others are found with SQL at the end
// (repeats.ts). A column's value is checked by the rules of its type, stated once in
// src/columns/types.ts; a key's one name and type within a cycle as records arrive
// (intake.ts, src/columns/schema.ts).
import { z } from 'zod';
import { inKeyOrder, isInKeyOrder } from '../columns/order.js';
import { checkColumnValue } from '../columns/types.js';
import { currencyName, isCurrencyCode } from '../currency/iso4217.js';
import { EMAIL_MAX_LENGTH, emailAddress } from '../email.js';
import { ID_PATTERNS } from '../ids.js';

/** The statuses a merit cycle may have; the API serves them as loaded. */
export const MERIT_CYCLE_STATUSES = ['active', 'inactive', 'finalized'] as const;
/** An employee's eligibility; the API serves it as loaded. */
export const ELIGIBILITY_STATUSES = ['eligible', 'ineligible'] as const;

// Fields the database keeps as text columns of their own (names, sorting keys) must be
// storable there: U+0000 cannot be stored in PostgreSQL text, and an unpaired UTF-16
// surrogate (JSON allows "\ud800") has no UTF-8 form at all. Both are refused on either
// database, naming the field. Inside `columns` (kept as JSON text, where JSON.stringify
// escapes both) any JSON string is kept and served back exactly.
export const NOT_STORABLE =
  'must not contain the character U+0000 or an unpaired UTF-16 surrogate (\\uD800–\\uDFFF)';
const isStorableText = (value: string) => value.isWellFormed() && !value.includes('\u0000');

// Such a field is also of a length that fits the databases' indexes.
// PostgreSQL refuses a B-tree entry over 2,704 bytes, and names are index keys there: a
// cycle's name (unique per organisation), an employee's last and first names (the page
// order, together with three ids), an email (unique per cycle). 200 UTF-16 code units are
// at most 600 bytes of UTF-8, so both names of an employee and the ids fit with room to
// spare; the limits hold on SQLite too, so that a data set loads on either or on neither.
const NAME_MAX_LENGTH = 200;
const atMost = (max: number) => ({ message: `must be at most ${max} characters` });
const storable = z
  .string()
  .max(NAME_MAX_LENGTH, atMost(NAME_MAX_LENGTH))
  .refine(isStorableText, { message: NOT_STORABLE });

// Stored exactly as given (no trimming): a value only has to contain something.
const notEmpty = { message: 'must not be empty' };
const filled = (value: string) => value.trim().length > 0;
const text = storable.refine(filled, notEmpty);

const email = emailAddress({
  invalid: 'must be an email address',
  tooLong: atMost(EMAIL_MAX_LENGTH).message,
});

const currencyCode = z
  .string()
  .refine(isCurrencyCode, { message: 'must be an ISO 4217 currency code, e.g. USD' });

// Any ISO 8601 offset is accepted; values are stored and served as UTC. Years are kept
// to 0001–9999 so that every stored timestamp has the same 24-character ISO form.
const timestamp = z.iso
  .datetime({
    offset: true,
    local: false,
    message: 'must be an ISO 8601 date-time, e.g. 2025-01-01T00:00:00.000Z',
  })
  .transform((value, ctx) => {
    const date = new Date(value);
    const year = date.getUTCFullYear();
    if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
      ctx.addIssue({ code: 'custom', message: 'must be a date-time between years 0001 and 9999' });
      return z.NEVER;
    }
    return date.toISOString();
  });

const idOf = (prefix: 'mc' | 'mce') =>
  z
    .string()
    .regex(ID_PATTERNS[prefix], { message: `must be ${prefix}_ followed by a lowercase UUID` });

// JSON.parse reads any depth, but a column value nested thousands of levels deep would
// overflow the stack of whatever walks it recursively next. No real column is nested
// beyond a few levels; 64 leaves plenty of room.
const MAX_JSON_DEPTH = 64;
const NOT_JSON = 'must be a JSON value (null, boolean, number, string, array or object)';
const isPlainJson = (value: object) => {
  const prototype = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
};

// Any JSON value a file can hold: the first reason it cannot be stored is reported — not
// JSON (a data set held in memory is not parsed from text), a number JSON.parse turned to
// Infinity, nesting deeper than MAX_JSON_DEPTH. Iterative, so that no input can exhaust
// the stack here. (zod's z.json() walks a value recursively: a value nested a few
// thousand levels deep overflowed it.)
const JsonValue = z.unknown().superRefine((value, ctx) => {
  const problem = jsonValueProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
});

type Walked = { value: unknown; path: (string | number)[] };

function jsonValueProblem(value: unknown): { path: Walked['path']; message: string } | undefined {
  const pending: Walked[] = [{ value, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, path } = next;
    if (current === null || typeof current === 'boolean' || typeof current === 'string') continue;
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return { path, message: 'is a number too large to store' };
      continue;
    }
    if (typeof current !== 'object' || !isPlainJson(current)) return { path, message: NOT_JSON };
    // Named at the value itself: a path 64 levels deep would help nobody.
    if (path.length >= MAX_JSON_DEPTH) {
      return { path: [], message: `is nested deeper than ${MAX_JSON_DEPTH} levels` };
    }
    // Pushed last to first, so that the first problem in the value's order is found.
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        pending.push({ value: current[index], path: [...path, index] });
      }
      continue;
    }
    const entries = Object.entries(current);
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, item] = entries[index] as [string, unknown];
      pending.push({ value: item, path: [...path, key] });
    }
  }
  return undefined;
}

// Kept as JSON text: any string JSON can say. The value's shape is checked against the
// column's type by columns/types.ts, which knows the merit cycle's currency (Columns).
const Column = z.strictObject({
  name: z.string(),
  type: z.string().refine(filled, notEmpty),
  value: JsonValue,
});

const ColumnsShape = z.record(z.string().min(1, 'a column key must not be empty'), Column);
type ColumnsShape = z.output<typeof ColumnsShape>;

/**
 * An employee's columns in a cycle whose currency is `currency` (undefined while the
 * cycle's own record is at fault). Columns are checked against ColumnsShape, then each
 * value against its type, but kept as the very objects that were parsed: zod rebuilds
 * objects by assignment, which would turn a key such as "__proto__" into a prototype and
 * lose it. Only a value the type rules store otherwise (a JSON number as a decimal string)
 * is put into a copy of its column, and columns given out of key order into a new object.
 */
const columnsIn = (currency: string | undefined) =>
  z.unknown().transform((value, ctx) => {
    const result = ColumnsShape.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues) {
        // A bad key is reported with what is wrong with it, not as "Invalid key in record".
        if (issue.code === 'invalid_key') {
          for (const inner of issue.issues) {
            ctx.addIssue({ code: 'custom', path: issue.path, message: inner.message });
          }
        } else ctx.addIssue({ ...issue });
      }
      return z.NEVER;
    }
    const columns = value as ColumnsShape;
    let changed = false;
    const entries = Object.keys(columns).map((key) => {
      const column = columns[key] as ColumnsShape[string];
      const checked = checkColumnValue(column.type, column.value, currency);
      if (!checked.ok) {
        for (const issue of checked.issues) {
          ctx.addIssue({
            code: 'custom',
            path: [key, 'value', ...issue.path],
            message: issue.message,
          });
        }
        return [key, column] as const;
      }
      if (checked.value === column.value) return [key, column] as const;
      changed = true;
      return [key, { ...column, value: checked.value }] as const;
    });
    // Stored in key order (columns/order.ts): the same columns from any format are the same text.
    const ordered = isInKeyOrder(entries.map(([key]) => key));
    return changed || !ordered ? (inKeyOrder(entries) as ColumnsShape) : columns;
  });

const CurrencyCode = z.union(
  [currencyCode, z.strictObject({ code: currencyCode, value: text.optional() })],
  { message: 'must be an ISO 4217 code, or an object {"code": "GBP", "value": "British Pound"}' },
);

const employeeIn = (currency: string | undefined) =>
  z.strictObject({
    id: idOf('mce').optional(),
    email,
    firstName: text,
    lastName: text,
    preferredName: storable.nullable().optional(),
    currencyCode: CurrencyCode.transform((given) =>
      typeof given === 'string'
        ? { code: given, value: currencyName(given) }
        : { code: given.code, value: given.value ?? currencyName(given.code) },
    ),
    eligibilityStatus: z.enum(ELIGIBILITY_STATUSES),
    columns: columnsIn(currency),
  });
type EmployeeSchema = ReturnType<typeof employeeIn>;

// One schema per cycle currency (a data set has a few), made when first needed.
const employeeSchemas = new Map<string | undefined, EmployeeSchema>();

/**
 * The schema of an employee of a merit cycle whose currency is `currency` (currency
 * columns are amounts in it); undefined while the cycle's own record is at fault, when any
 * ISO 4217 code passes and the cycle's problem is reported instead.
 */
export function employeeSchema(currency: string | undefined): EmployeeSchema {
  let schema = employeeSchemas.get(currency);
  if (!schema) {
    schema = employeeIn(currency);
    employeeSchemas.set(currency, schema);
  }
  return schema;
}
export const Employee = employeeSchema(undefined);
export type ImportEmployee = z.output<typeof Employee>;

const END_BEFORE_START = 'must not be before startDate';

// JSON.parse reads a number beyond the largest double (1e400) as Infinity.
const ExchangeRates = z.record(
  currencyCode,
  z
    .number({
      error: (issue) =>
        issue.input === Number.POSITIVE_INFINITY || issue.input === Number.NEGATIVE_INFINITY
          ? 'is a number too large to store'
          : 'must be a positive number',
    })
    .positive('must be a positive number'),
);

const meritCycleFields = {
  id: idOf('mc').optional(),
  name: text,
  status: z.enum(MERIT_CYCLE_STATUSES),
  startDate: timestamp,
  endDate: timestamp,
  createdDate: timestamp.optional(),
  currency: currencyCode,
  exchangeRates: ExchangeRates.optional(),
};

// Compared only when both dates are valid: zod runs object checks after field issues,
// and a malformed date must not also be reported as "before startDate".
const datesInOrder = {
  path: ['endDate'],
  message: END_BEFORE_START,
  when: ({ value, issues }: { value: unknown; issues: readonly { path?: PropertyKey[] }[] }) =>
    typeof value === 'object' &&
    value !== null &&
    issues.every((issue) => issue.path?.[0] !== 'startDate' && issue.path?.[0] !== 'endDate'),
};

/**
 * A merit cycle record: the fields of a cycle, its employees records of their own.
 * `employees` is here only when it is not a list (then it is reported as it would be in
 * the whole data set).
 */
export const MeritCycleRecord = z
  .strictObject({ ...meritCycleFields, employees: z.array(z.unknown()).optional() })
  .refine((cycle) => cycle.endDate >= cycle.startDate, datesInOrder);

export type ImportMeritCycleRecord = z.output<typeof MeritCycleRecord>;
export type ImportRoot = z.output<typeof Root>;

const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const Organization = z.strictObject({
  slug: z.string().regex(SLUG_PATTERN, {
    message: 'must be 1–63 lowercase letters, digits and inner hyphens, e.g. acme',
  }),
  name: text,
  apiKeysEnabled: z.boolean().optional(),
});

/** The top of a data set: the organisation; the merit cycles are records of their own. */
export const Root = z.strictObject({
  organization: Organization,
  meritCycles: z.array(z.unknown()),
});

/** A data set held in memory (the demo, CSV, tests), as given: loaded as a file is. */
export interface DataSetInput {
  organization: z.input<typeof Organization>;
  meritCycles: (Omit<z.input<typeof MeritCycleRecord>, 'employees'> & {
    employees?: z.input<typeof Employee>[];
  })[];
}
