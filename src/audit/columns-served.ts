// The columns served, as the audit log records them (docs/security.md, "Audit log"): the
// column keys present in an answer after the key's hidden columns and $select, sorted,
// each JSON-encoded, between commas: `,"basePay","bonus",` (migration 0015 says why). What
// a request serves is a constant of its route, scope, cycle and $select, never read from
// its rows: the REST reads' text is kept per (scope, cycle) until an import commits
// (src/db/data-revision.ts), so a request pays one Map lookup, and the schema is read
// once per import.
import { findColumnSchema } from '../columns/repository.js';
import type { DatabaseHandle } from '../db/connect.js';
import type { ReadScope } from '../tenancy/scope.js';

/** The stored text of these column keys; null for none. */
export function columnsServedText(keys: Iterable<string>): string | null {
  const sorted = [...new Set(keys)].sort();
  if (sorted.length === 0) return null;
  return `,${sorted.map((key) => JSON.stringify(key)).join(',')},`;
}

/** The column keys of a stored text, sorted. */
export function columnsOfText(text: string | null): string[] | null {
  if (text === null || text.length < 2) return null;
  return JSON.parse(`[${text.slice(1, -1)}]`) as string[];
}

/** What the filter by a column searches the stored text for. */
export const columnNeedle = (key: string): string => `,${JSON.stringify(key)},`;

// Kept (scope, cycle) pairs at most; past it the map starts again (a rebuild is one read).
const MAX_KEPT = 10_000;

/**
 * The columns a REST read of a cycle serves (a page, a delta page, a bulk download): the
 * cycle's column schema less the key's hidden columns, all of which every employee's
 * object carries. Kept per (scope, cycle) at the data revision it was read at.
 */
export class CycleColumnsServed {
  private readonly kept = new Map<string, { revision: number; text: string | null }>();

  constructor(private readonly database: DatabaseHandle) {}

  async of(scope: ReadScope, meritCycleId: string): Promise<string | null> {
    const revision = this.database.revision.current();
    const name = `${scope.fingerprint}\n${meritCycleId}`;
    const known = this.kept.get(name);
    if (known !== undefined && revision !== undefined && known.revision === revision) {
      return known.text;
    }
    const columns = await findColumnSchema(this.database.db, scope, meritCycleId);
    const text = columnsServedText((columns ?? []).map((column) => column.key));
    if (revision !== undefined) {
      if (this.kept.size >= MAX_KEPT) this.kept.clear();
      this.kept.set(name, { revision, text });
    }
    return text;
  }
}
