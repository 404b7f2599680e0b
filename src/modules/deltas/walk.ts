// A delta walk (docs/delta-sync.md): which changes one request of a delta endpoint
// reads, and what its answer hands back — nextCursor to go on, or, on the last page, the
// deltaToken to sync from later.
//
// Items are read in the order of their change stamps (src/changes/change.ts), ties by id.
// A change committed while a walk goes on is stamped above every stamp the walk has read,
// so it lies ahead of the walk's position and is read before the walk ends. The last page
// reads, in the same statement as its items, the organisation's counter C: every change
// stamped C or less was visible to that statement, and every later one will be stamped
// above C. C is the token: the next walk reads what is stamped above it. Nothing is lost;
// an item changed during a walk may come in this walk and the next.
//
// The first walk (no token) reads every item (from -1: rows stored before change
// tracking carry 0), and of removals only those stamped after its first page (from the
// counter that page read): an item removed after the walk read it is reported removed.
import { z } from 'zod';
import { ApiError, badRequest } from '../../errors.js';
import type { CursorCodec, CursorScope } from '../../pagination/cursor.js';

export const BOTH_CURSOR_AND_TOKEN =
  'Send nextCursor to go on with a delta walk, or deltaToken to start one, not both';
export const FULL_SYNC_NEEDED =
  'deltaToken has expired: the changes since it are no longer kept. Sync in full again (call without deltaToken) and keep the new deltaToken';
const CHANGED_FORMAT = 'is no longer valid: sync in full again (call without deltaToken)';

const DAY_MS = 86_400_000;

const WalkState = z.object({ from: z.int().min(-1), removalsFrom: z.int().min(0) });
const WalkPosition = z.tuple([z.int().min(0), z.string()]);
const TokenState = z.object({ stamp: z.int().min(0), issuedAt: z.int().min(0) });

export interface DeltaWalk {
  /** Items stamped above this; -1: every item (a first walk). */
  readonly from: number;
  /**
   * Removals stamped above this; undefined on the first page of a first walk, which reads
   * none (there are none above the counter it reads).
   */
  readonly removalsFrom: number | undefined;
  /** The stamp and id of the last item already read; undefined on a walk's first page. */
  readonly after: readonly [stamp: number, id: string] | undefined;
  readonly limit: number;
}

/** A changed item as a page holds it: its stamp and id order the walk. */
export interface Change<Item> {
  readonly stamp: number;
  readonly id: string;
  /** The item as the list endpoints serve it; undefined: removed. */
  readonly item: Item | undefined;
}

/** What the statement of a page read besides its items (the same snapshot). */
export interface DeltaState {
  /** The organisation's change counter. */
  readonly counter: number;
  /** The newest stamp of a purged tombstone. */
  readonly purgedThrough: number;
  /** Employees: the stamp of the creation of their merit cycle. */
  readonly createdStamp?: number;
}

const gone = () => new ApiError(410, FULL_SYNC_NEEDED);

/** The walk a request asks for: from its nextCursor, its deltaToken, or from the start. */
export function resolveDeltaWalk(options: {
  codec: CursorCodec;
  scope: CursorScope;
  nextCursor: string | undefined;
  deltaToken: string | undefined;
  limit: number;
  /** Milliseconds since the epoch (the server's clock). */
  now: number;
  retentionDays: number;
}): DeltaWalk {
  const { codec, scope, nextCursor, deltaToken, limit } = options;
  if (nextCursor !== undefined && deltaToken !== undefined) {
    throw badRequest(BOTH_CURSOR_AND_TOKEN);
  }
  if (nextCursor !== undefined) {
    const decoded = codec.decode(nextCursor, scope);
    const state = WalkState.safeParse(decoded.filters);
    const after = WalkPosition.safeParse(decoded.after);
    if (!state.success || !after.success) throw badRequest(`nextCursor ${CHANGED_FORMAT}`);
    return { ...state.data, after: after.data, limit };
  }
  if (deltaToken !== undefined) {
    const token = TokenState.safeParse(codec.decodeDeltaToken(deltaToken, scope));
    if (!token.success) throw badRequest(`deltaToken ${CHANGED_FORMAT}`);
    // Removals are kept this long; so is a token, whatever was removed since.
    if (token.data.issuedAt < options.now - options.retentionDays * DAY_MS) throw gone();
    const { stamp } = token.data;
    return { from: stamp, removalsFrom: stamp, after: undefined, limit };
  }
  return { from: -1, removalsFrom: undefined, after: undefined, limit };
}

/**
 * Whether the walk can still be answered: not if a removal it would need has been purged,
 * if its merit cycle was removed and imported again since it began, or if it began at a
 * stamp the organisation has not reached (a database restored from a backup, or change
 * tracking started again): each answers 410, and the client syncs in full again.
 */
export function checkAnswerable(walk: DeltaWalk, state: DeltaState): void {
  const since = walk.from >= 0 ? walk.from : walk.removalsFrom;
  if (since === undefined) return;
  if (since > state.counter) throw gone();
  if (walk.removalsFrom !== undefined && walk.removalsFrom < state.purgedThrough) throw gone();
  if (state.createdStamp !== undefined && since < state.createdStamp) throw gone();
}

/** The order of a walk: stamp, then id (ids are ASCII: code unit order is code point order). */
export function byChangeOrder(a: Change<unknown>, b: Change<unknown>): number {
  return a.stamp - b.stamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The answer to a page: `changes` were read in change order, one more than the page
 * holds when another page follows (the items of a page and its removals come from two
 * scans, merged by the caller).
 */
export function deltaPage<Item>(options: {
  codec: CursorCodec;
  scope: CursorScope;
  walk: DeltaWalk;
  state: DeltaState;
  changes: readonly Change<Item>[];
  now: number;
}): { changes: readonly Change<Item>[]; nextCursor: string | null; deltaToken: string | null } {
  const { codec, scope, walk, state, changes } = options;
  const removalsFrom = walk.removalsFrom ?? state.counter;
  if (changes.length > walk.limit) {
    const page = changes.slice(0, walk.limit);
    const last = page[page.length - 1] as Change<Item>;
    const nextCursor = codec.encode(scope, { from: walk.from, removalsFrom }, [
      last.stamp,
      last.id,
    ]);
    return { changes: page, nextCursor, deltaToken: null };
  }
  const deltaToken = codec.encodeDeltaToken(scope, {
    stamp: state.counter,
    issuedAt: options.now,
  });
  return { changes, nextCursor: null, deltaToken };
}
