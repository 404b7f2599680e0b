// The one order of column keys and parts: by code point, as the databases order text (and
// as the schema lists them). Stored employees hold their columns, and composite values
// their parts, in this order whatever order a file gave them in, so that the same data
// loaded from JSON, NDJSON or CSV is the same stored text (and a re-import is unchanged).

/** Strings by code point (UTF-16 order differs from it above U+FFFF). */
export function byCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a.codePointAt(index) as number;
    const y = b.codePointAt(index) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) index++;
  }
  return a.length - b.length;
}

/**
 * Entries in key order, as an object (own properties: a key `__proto__` stays a key). Keys
 * that are array indexes ("7") still come first, in numeric order: JavaScript orders an
 * object's keys so, from whatever source.
 */
export function inKeyOrder<T>(entries: readonly (readonly [string, T])[]): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => byCodePoint(a, b)));
}

/** Whether the keys are already in key order (then nothing need be rebuilt). */
export function isInKeyOrder(keys: readonly string[]): boolean {
  for (let index = 1; index < keys.length; index++) {
    if (byCodePoint(keys[index - 1] as string, keys[index] as string) > 0) return false;
  }
  return true;
}
