// What a key may read (docs/api-keys.md, "Least privilege"): its organisation, optionally
// only some of its merit cycles, and every employee without the columns it hides; and from
// where (its address allowlist). Repositories take a ReadScope instead of an organisation
// id, so that no query can forget the cycle scope, and what is kept per reader (cached
// answers, cursor signatures) is keyed by its fingerprint.
import { createHash } from 'node:crypto';

export interface ReadScope {
  readonly organizationId: string;
  /** The merit cycles the key reads; null: every cycle of the organisation. */
  readonly cycleIds: readonly string[] | null;
  /** Column keys removed from every employee the key reads; sorted, often empty. */
  readonly hiddenColumns: readonly string[];
  /** The address ranges (CIDR) the key may be used from; null: any address. */
  readonly allowedAddresses: readonly string[] | null;
  /**
   * Column types whose columns (and composite parts) are removed from every employee the
   * key reads, whatever cycle and import brings them (src/columns/hidden.ts); sorted.
   */
  readonly hiddenColumnTypes: readonly string[];
  /**
   * The slice of the organisation's employees the key reads (src/row-slices/); null: every
   * employee. Its members are precomputed, so every read path joins them (rows.ts).
   */
  readonly rowSlice: RowSliceRef | null;
  /**
   * Equal exactly for keys that may see the same from the same addresses: the organisation
   * id for a key that reads everything of it from anywhere (so such keys share cached
   * answers and cursors, as before scopes existed), else the organisation id and a hash
   * of the cycles, hidden columns, allowlist, hidden column types and row slice.
   */
  readonly fingerprint: string;
}

/** A key's row slice: its id, and the slice as people read it. */
export interface RowSliceRef {
  readonly id: string;
  readonly description: string;
}

/** The scope of a key of the organisation; lists are sorted, so their order never matters. */
export function readScope(
  organizationId: string,
  cycleIds: readonly string[] | null,
  hiddenColumns: readonly string[],
  allowedAddresses: readonly string[] | null = null,
  hiddenColumnTypes: readonly string[] = [],
  rowSlice: RowSliceRef | null = null,
): ReadScope {
  const cycles = cycleIds === null ? null : [...new Set(cycleIds)].sort();
  const hidden = [...new Set(hiddenColumns)].sort();
  const allowed = allowedAddresses === null ? null : [...new Set(allowedAddresses)].sort();
  const types = [...new Set(hiddenColumnTypes)].sort();
  // A key without an allowlist (or hidden types) hashes what it hashed before they existed,
  // so that its cursors stay valid.
  const scoped =
    rowSlice !== null
      ? [cycles, hidden, allowed, types, rowSlice.id]
      : types.length > 0
        ? [cycles, hidden, allowed, types]
        : allowed === null
          ? [cycles, hidden]
          : [cycles, hidden, allowed];
  const fingerprint =
    cycles === null &&
    hidden.length === 0 &&
    allowed === null &&
    types.length === 0 &&
    rowSlice === null
      ? organizationId
      : `${organizationId}/${createHash('sha256')
          .update(JSON.stringify(scoped))
          .digest('base64url')
          .slice(0, 22)}`;
  return {
    organizationId,
    cycleIds: cycles,
    hiddenColumns: hidden,
    allowedAddresses: allowed,
    hiddenColumnTypes: types,
    rowSlice,
    fingerprint,
  };
}

/** The stored JSON text of a list (null stays null). */
export const toStoredList = (list: readonly string[] | null): string | null =>
  list === null ? null : JSON.stringify(list);

/** A stored list back (null stays null). */
export const fromStoredList = (text: string | null): string[] | null =>
  text === null ? null : (JSON.parse(text) as string[]);
