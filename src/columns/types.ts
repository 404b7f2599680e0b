// The six column types and what a value of each may be (docs/import-format.md, "Column
// types"): the one statement of the rules, which the import checks (import/schema.ts), the
// column schema describes (schema.ts) and CSV writes and reads (cells.ts). Any other type
// is open: its value is any JSON value, kept as loaded.
import { isCurrencyCode } from '../currency/iso4217.js';
import { inKeyOrder, isInKeyOrder } from './order.js';

export const COLUMN_TYPES = ['text', 'number', 'date', 'boolean', 'currency', 'composite'] as const;
export type KnownColumnType = (typeof COLUMN_TYPES)[number];

export const isKnownColumnType = (type: string): type is KnownColumnType =>
  (COLUMN_TYPES as readonly string[]).includes(type);

/** What a part of a composite value is: a string of one of three kinds, or a currency object. */
export const PART_TYPES = ['text', 'number', 'date', 'currency'] as const;
export type PartType = (typeof PART_TYPES)[number];

/** A decimal as the vendor writes one: `-12.50`, `120000`, `0.97`. No exponent, no `+`. */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;
export const isDecimal = (text: string) => DECIMAL.test(text);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The Gregorian calendar's leap years, as JavaScript's Date counts them back to year 1. */
const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/**
 * `YYYY-MM-DD` naming a day that exists (2025-02-29 does not), years 0001–9999. Counted, not
 * made into a Date: the import checks every date of every employee, and the Date (and the
 * match's copies) cost most of that check.
 */
export function isCalendarDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const days = month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  return day <= days;
}

/**
 * A JSON number as a plain decimal string: the shortest text that reads back as the same
 * double (what JavaScript's String gives, and so what JSON.parse saw), its exponent written
 * out: 120000.5 → "120000.5", 1e21 → "1000000000000000000000", 1.5e-7 → "0.00000015".
 * Nothing is rounded beyond what reading the number as a double did. Undefined for
 * Infinity and NaN (a JSON number beyond the largest double reads as Infinity).
 */
export function decimalOfNumber(number: number): string | undefined {
  if (!Number.isFinite(number)) return undefined;
  const text = String(number);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

export interface ValueIssue {
  /** Below the column's value: `[]` for the value itself, `['USD']`, `['jobLevel']`. */
  path: (string | number)[];
  message: string;
}

/** A value as it is stored (JSON numbers as decimal strings), or what is wrong with it. */
export type Checked = { ok: true; value: unknown } | { ok: false; issues: ValueIssue[] };

/** A JSON object (not an array, not null). */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const wrong = (message: string, path: ValueIssue['path'] = []): Checked => ({
  ok: false,
  issues: [{ path, message }],
});

/** A decimal string as given, a JSON number as its decimal string; else undefined. */
function decimalOf(value: unknown): string | undefined {
  if (typeof value === 'string') return isDecimal(value) ? value : undefined;
  return typeof value === 'number' ? decimalOfNumber(value) : undefined;
}

const TOO_LARGE = 'is a number too large to store';
const isInfinite = (value: unknown) => typeof value === 'number' && !Number.isFinite(value);

/**
 * A currency value: `{ "<currency>": "<decimal>" }` with exactly one key, the merit cycle's
 * currency (when `currency` is unknown, because the cycle's own record is at fault, any
 * ISO 4217 code passes here: the cycle's problem is reported instead).
 */
function checkCurrency(value: unknown, currency: string | undefined, what: string): Checked {
  const example = `{"${currency ?? 'USD'}": "120000.00"}`;
  const keys = isPlainObject(value) ? Object.keys(value) : [];
  const [code] = keys;
  if (!isPlainObject(value) || code === undefined || keys.length !== 1) {
    return wrong(
      `${what} must be an object with one key, the merit cycle's currency code, whose value is a decimal string: ${example}`,
    );
  }
  if (currency !== undefined ? code !== currency : !isCurrencyCode(code)) {
    return wrong(
      currency !== undefined
        ? `must be the merit cycle's currency, ${currency}: amounts are in the cycle's currency`
        : 'must be an ISO 4217 currency code, e.g. USD',
      [code],
    );
  }
  const amount = value[code];
  const decimal = decimalOf(amount);
  if (decimal === undefined) {
    return wrong(
      isInfinite(amount)
        ? TOO_LARGE
        : 'a currency amount must be a decimal string such as "120000.00", or a JSON number',
      [code],
    );
  }
  return { ok: true, value: amount === decimal ? value : { [code]: decimal } };
}

/** A part of a composite value: a string (text, a decimal or a date) or a currency object. */
function checkPart(value: unknown, currency: string | undefined): Checked {
  if (typeof value === 'string') return { ok: true, value };
  if (isPlainObject(value)) return checkCurrency(value, currency, 'a currency part');
  return wrong(
    'a composite column part must be a string (text, a decimal or a date) or a currency object',
  );
}

function checkComposite(value: Record<string, unknown>, currency: string | undefined): Checked {
  const issues: ValueIssue[] = [];
  let changed = false;
  const parts = Object.entries(value).map(([part, given]) => {
    const checked = checkPart(given, currency);
    if (!checked.ok) {
      for (const issue of checked.issues) issues.push({ ...issue, path: [part, ...issue.path] });
      return [part, given] as const;
    }
    changed ||= checked.value !== given;
    return [part, checked.value] as const;
  });
  if (issues.length > 0) return { ok: false, issues };
  // Stored with its parts in key order (order.ts).
  const ordered = isInKeyOrder(parts.map(([part]) => part));
  return { ok: true, value: changed || !ordered ? inKeyOrder(parts) : value };
}

/**
 * A column's value checked against its type; `currency` is the merit cycle's. `null` is
 * every column's empty value. A JSON number given for a `number` or a currency amount is
 * stored as its decimal string, and a composite value's parts in key order (order.ts);
 * anything else is kept exactly as given (the same object, when nothing changed).
 */
export function checkColumnValue(type: string, value: unknown, currency?: string): Checked {
  if (value === null || !isKnownColumnType(type)) return { ok: true, value };
  switch (type) {
    case 'text':
      return typeof value === 'string'
        ? { ok: true, value }
        : wrong('a text column value must be a string or null');
    case 'number': {
      const decimal = decimalOf(value);
      if (decimal !== undefined) return { ok: true, value: decimal };
      return wrong(
        isInfinite(value)
          ? TOO_LARGE
          : 'a number column value must be a decimal string such as "0.97", a JSON number, or null',
      );
    }
    case 'date':
      return typeof value === 'string' && isCalendarDate(value)
        ? { ok: true, value }
        : wrong('a date column value must be a calendar date YYYY-MM-DD that exists, or null');
    case 'boolean':
      return typeof value === 'boolean'
        ? { ok: true, value }
        : wrong('a boolean column value must be true, false or null');
    case 'currency':
      return checkCurrency(value, currency, 'a currency column value');
    case 'composite':
      return isPlainObject(value)
        ? checkComposite(value, currency)
        : wrong(
            'a composite column value must be an object of named parts (strings, decimals, dates or currency objects), or null',
          );
  }
}

/** The kind of a (valid) part: a currency object, or the narrowest kind of string it is. */
export function partTypeOf(value: unknown): PartType {
  if (typeof value !== 'string') return 'currency';
  if (isDecimal(value)) return 'number';
  return isCalendarDate(value) ? 'date' : 'text';
}

/**
 * The type of a part that has been `a` and `b`: the same, or text for strings of two kinds
 * (a part that is `"5"` for one employee and `"L5"` for another is text); undefined when
 * one is a currency object and the other a string, which one part cannot be.
 */
export function widerPartType(a: PartType, b: PartType): PartType | undefined {
  if (a === b) return a;
  return a === 'currency' || b === 'currency' ? undefined : 'text';
}
