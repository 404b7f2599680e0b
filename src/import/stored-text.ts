// What text and JSON values an import may store, beyond their shape.
//
// - Fields the database keeps as text columns of their own (names, sorting keys) must be
//   storable there: U+0000 cannot be stored in PostgreSQL text, and an unpaired UTF-16
//   surrogate (JSON allows "\ud800") has no UTF-8 form at all. Both are refused on either
//   database, naming the field. Inside `columns` (kept as JSON text, where JSON.stringify
//   escapes both) any JSON string is kept and served back exactly.
// - JSON.parse reads any depth, but a column value nested thousands of levels deep would
//   overflow the stack of whatever walks it recursively next. No real column is nested
//   beyond a few levels; 64 leaves plenty of room.

export const NOT_STORABLE =
  'must not contain the character U+0000 or an unpaired UTF-16 surrogate (\\uD800–\\uDFFF)';

export const MAX_JSON_DEPTH = 64;

/** Whether a string can be stored and served back exactly, on both databases. */
export function isStorableText(value: string): boolean {
  return value.isWellFormed() && !value.includes('\u0000');
}

export interface JsonValueProblem {
  /** Where, below the value itself (empty for the value). */
  path: (string | number)[];
  message: string;
}

const NOT_JSON = 'must be a JSON value (null, boolean, number, string, array or object)';

/**
 * The first reason `value` is not a JSON value an import can store: not JSON (the data
 * sets held in memory are not parsed from text), a number JSON.parse turned to Infinity,
 * nesting deeper than MAX_JSON_DEPTH. Iterative, so that no input can exhaust the stack
 * here.
 */
export function jsonValueProblem(value: unknown): JsonValueProblem | undefined {
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, path } = next;
    if (current === null || typeof current === 'boolean') continue;
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return { path, message: 'is a number too large to store' };
      continue;
    }
    if (typeof current === 'string') continue;
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

function isPlainJson(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
