// SQL functions SQLite lacks and the queries need, registered on each connection the app
// opens (connect.ts). decimal_compare(a, b): two decimals compared exactly, as PostgreSQL's
// numeric compares them, where SQLite's own numbers are doubles (15–17 significant
// digits): -1, 0 or 1; null when either is not a decimal (the OData feed's $filter on
// decimal values, docs/odata.md, "Cost").
import type SQLite from 'better-sqlite3';

const DECIMAL = /^([+-]?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

interface Decimal {
  negative: boolean;
  /** The significant digits, without leading or trailing zeros; '' for zero. */
  digits: string;
  /** The power of ten of the first significant digit's place, plus one. */
  magnitude: number;
}

function decimalOf(value: unknown): Decimal | null {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint') {
    return null;
  }
  const match = DECIMAL.exec(String(value));
  if (!match) return null;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const all = whole + fraction;
  const leading = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(leading).replace(/0+$/, '');
  const magnitude = whole.length - leading + Number(exponent);
  return { negative: sign === '-' && digits !== '', digits, magnitude };
}

/** a and b compared exactly: -1, 0 or 1; null when either is not a decimal. */
export function compareDecimals(a: unknown, b: unknown): number | null {
  const x = decimalOf(a);
  const y = decimalOf(b);
  if (x === null || y === null) return null;
  if (x.negative !== y.negative) return x.negative ? -1 : 1;
  const flip = x.negative ? -1 : 1;
  if (x.digits === '' || y.digits === '') {
    return x.digits === y.digits ? 0 : (x.digits === '' ? -1 : 1) * flip;
  }
  if (x.magnitude !== y.magnitude) return (x.magnitude < y.magnitude ? -1 : 1) * flip;
  const length = Math.max(x.digits.length, y.digits.length);
  const left = x.digits.padEnd(length, '0');
  const right = y.digits.padEnd(length, '0');
  return left === right ? 0 : (left < right ? -1 : 1) * flip;
}

export function registerSqliteFunctions(sqlite: SQLite.Database): void {
  sqlite.function('decimal_compare', { deterministic: true }, (a, b) => compareDecimals(a, b));
}
