// Where SQLite and PostgreSQL differences in stored values are smoothed out: every
// repository's toX(row) goes through these.

// What toISOString writes, and so what compplan stores in SQLite: text already in this
// form is returned as it is, without parsing a Date and writing it again.
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A stored timestamp (ISO text in SQLite, Date from PostgreSQL) as ISO 8601 UTC with ms. */
export function toIso(value: Date | string): string {
  if (typeof value === 'string' && ISO_UTC_MS.test(value)) return value;
  return (typeof value === 'string' ? new Date(value) : value).toISOString();
}

/** A stored timestamp that may be absent, as toIso gives it, or null. */
export function toIsoOrNull(value: Date | string | null): string | null {
  return value === null ? null : toIso(value);
}

/** A stored flag (0/1 in SQLite, boolean in PostgreSQL). */
export function toBoolean(value: boolean | number): boolean {
  return value === true || value === 1;
}

/** The value to write for a flag: 0/1 binds in SQLite and PostgreSQL's boolean accepts it. */
export function fromBoolean(value: boolean): number {
  return value ? 1 : 0;
}
