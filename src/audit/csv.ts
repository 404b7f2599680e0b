// `compplan audit export`: an organisation's entries as CSV (RFC 4180, the export's own
// quoting: src/export/csv.ts), newest first. A cell that a spreadsheet would run as a
// formula — text starting with = + - @, a tab or a carriage return, such as a user agent
// a client chose — is prefixed with an apostrophe, so it is shown as text (OWASP, CSV
// injection).
import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import type { Db } from '../db/connect.js';
import { csvRow } from '../export/csv.js';
import { slicesById } from '../row-slices/repository.js';
import type { AuditEntry } from './entry.js';
import { type AuditFilter, type AuditPosition, listAuditEntries } from './repository.js';

export const AUDIT_CSV_COLUMNS = [
  'at',
  'action',
  'actor',
  'userId',
  'keyId',
  'target',
  'method',
  'route',
  'path',
  'meritCycleId',
  'status',
  'employees',
  'columnsServed',
  'clientAddress',
  'userAgent',
  'requestId',
  'details',
] as const satisfies readonly (keyof AuditEntry)[];

/**
 * The file's header: the entry's columns, then `rowSlice`, the description of the slice a
 * request was read through (`department = Sales`; empty for a key of every employee).
 */
export const AUDIT_CSV_HEADER = [...AUDIT_CSV_COLUMNS, 'rowSlice'] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

/** Text a spreadsheet would read as a formula, made plain text; other values as they are. */
export function spreadsheetSafe(value: unknown): unknown {
  return typeof value === 'string' && FORMULA_START.test(value) ? `'${value}` : value;
}

export function auditCsvRow(entry: AuditEntry, rowSlice: string | null = null): string {
  return csvRow([
    ...AUDIT_CSV_COLUMNS.map((column) => {
      const value = entry[column];
      return spreadsheetSafe(
        value !== null && typeof value === 'object' ? JSON.stringify(value) : value,
      );
    }),
    spreadsheetSafe(rowSlice),
  ]);
}

const ENTRIES_PER_READ = 1_000;

/**
 * Writes the organisation's entries matching `filter` to `path`; how many. Written beside
 * it first and renamed when complete: a failure leaves no half file behind.
 */
export async function exportAuditCsv(
  db: Db,
  organizationId: string,
  filter: AuditFilter,
  path: string,
): Promise<number> {
  const partial = `${path}.partial-${process.pid}`;
  const out = createWriteStream(partial);
  await once(out, 'open');
  let count = 0;
  let done = false;
  try {
    out.write(csvRow(AUDIT_CSV_HEADER));
    // Slice descriptions by id, read once for the whole file.
    const descriptions = new Map<string, string>();
    let after: AuditPosition | undefined;
    for (;;) {
      const entries = await listAuditEntries(db, organizationId, filter, {
        after,
        limit: ENTRIES_PER_READ,
      });
      const unknown = [
        ...new Set(
          entries.flatMap((entry) => (entry.rowSliceId === null ? [] : [entry.rowSliceId])),
        ),
      ].filter((id) => !descriptions.has(id));
      if (unknown.length > 0) {
        for (const [id, slice] of await slicesById(db, unknown))
          descriptions.set(id, slice.description);
      }
      for (const entry of entries) {
        const slice =
          entry.rowSliceId === null
            ? null
            : (descriptions.get(entry.rowSliceId) ?? entry.rowSliceId);
        if (!out.write(auditCsvRow(entry, slice))) await once(out, 'drain');
      }
      count += entries.length;
      const last = entries.at(-1);
      if (!last || entries.length < ENTRIES_PER_READ) break;
      after = { at: last.at, id: last.id };
    }
    done = true;
  } finally {
    out.end();
    await once(out, 'finish');
    if (done) renameSync(partial, path);
    else rmSync(partial, { force: true });
  }
  return count;
}
