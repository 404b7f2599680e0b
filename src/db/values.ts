// Where SQLite and PostgreSQL differences in stored values are smoothed out: every
// repository's toX(row) goes through these.

/** A stored timestamp (ISO text in SQLite, Date from PostgreSQL) as ISO 8601 UTC with ms. */
export function toIso(value: Date | string): string {
  return (typeof value === 'string' ? new Date(value) : value).toISOString();
}

/** A stored flag (0/1 in SQLite, boolean in PostgreSQL). */
export function toBoolean(value: boolean | number): boolean {
  return value === true || value === 1;
}

/** The value to write for a flag: 0/1 binds in SQLite and PostgreSQL's boolean accepts it. */
export function fromBoolean(value: boolean): number {
  return value ? 1 : 0;
}
