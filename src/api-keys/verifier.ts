// Turns an x-api-key header into the key and organisation it authenticates, fast:
// malformed keys are refused without touching the database, and the database's answer
// for a key is kept in memory.
//
// A kept answer stays usable while the database confirms that no key has changed since:
// once a second each instance reads one number that triggers bump whenever a key is
// revoked, changed or deleted (migration 0007), and when it has moved, everything kept
// before is looked up again. So a key in use costs one lookup when first seen, however
// long the pauses between its requests (a report that runs every minute, a dashboard
// refreshed every 10 s), and a revocation reaches every instance within about a second.
// Should confirmations fail (the database unreachable), an answer is used for at most
// UNCONFIRMED_MS after its lookup or the last confirmation: revocation within 5 s holds
// either way (docs/api-behaviour.md, "Authentication").
//
// A key's expiry (and the end of an old secret's grace after a roll) needs no change to
// be seen: it is kept with the answer and compared with the clock on every request, so
// an expired secret gets the unknown key's 401 on every instance at the same moment.
import { LRUCache } from 'lru-cache';
import type { Db, Dialect } from '../db/connect.js';
import {
  type ActiveKey,
  findActiveKeyByHash,
  type LastUse,
  readKeysRevision,
  recordLastUsed,
} from './repository.js';
import { hashSecret, isWellFormedSecret } from './secret.js';

/** The key and organisation a request authenticates as. */
export type AuthenticatedKey = Readonly<ActiveKey>;

// How often each instance asks whether any key has changed.
const CONFIRM_EVERY_MS = 1_000;
// docs/api-behaviour.md: a revoked key gets 401 within 5 s on every instance. 4 s leaves a second
// for the request that is already in flight.
export const UNCONFIRMED_MS = 4_000;
// Bounded so that a flood of well-formed but unknown keys cannot grow memory; such a
// flood is also throttled per client address by the failed-authentication limit. Keys
// beyond it are looked up in the database again as they come (the benchmark keeps its
// keys within it).
export const KEY_CACHE_MAX_ENTRIES = 10_000;
// last_used_at is written in batches, not on every request: it is accurate to this.
const LAST_USED_FLUSH_MS = 15_000;

interface CacheEntry {
  key: AuthenticatedKey | null;
  /** The generation when the lookup began: a change seen since voids the answer. */
  generation: number;
  /** The monotonic clock's reading when the lookup began. */
  lookedUpAt: number;
}

export interface VerifierEvents {
  /** A key was looked up in the database (metrics: how often authentication reads it). */
  onLookup?: () => void;
  /** Last-used times could not be written, or confirmations began to fail (once until
   * one succeeds again). */
  onError: (error: unknown, what: 'last-used' | 'confirmation') => void;
  /** The wall clock expiry is compared with (ms since the epoch); tests set their own. */
  now?: () => number;
  /**
   * The clock how long an answer has gone unconfirmed is measured with (ms, any origin);
   * performance.now() when absent. Tests move their own instead of waiting seconds.
   */
  monotonic?: () => number;
}

export class ApiKeyVerifier {
  private readonly cache: LRUCache<string, CacheEntry>;
  /** Bumped whenever the keys' revision is seen to move: older answers are void. */
  private generation = 0;
  private keysRevision: number | undefined;
  /** The monotonic clock's reading when the last confirmation that succeeded began. */
  private confirmedAt = Number.NEGATIVE_INFINITY;
  /** The confirmation under way, if any. */
  private confirmation: Promise<void> | undefined;
  private confirmationFailing = false;
  /** Key id → when (ms since the epoch) and from where it was last used: a number per
   * request, text only when written. */
  private pendingLastUsed = new Map<string, LastUse>();
  private readonly now: () => number;
  private readonly monotonic: () => number;
  private readonly timers: NodeJS.Timeout[];

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly events: VerifierEvents,
  ) {
    this.now = events.now ?? Date.now;
    this.monotonic = events.monotonic ?? (() => performance.now());
    this.cache = new LRUCache<string, CacheEntry>({
      max: KEY_CACHE_MAX_ENTRIES,
      // Concurrent requests with the same key share one database lookup.
      fetchMethod: async (secretHash) => {
        const entry = { generation: this.generation, lookedUpAt: this.monotonic() };
        this.events.onLookup?.();
        return { ...entry, key: (await findActiveKeyByHash(this.db, secretHash)) ?? null };
      },
    });
    this.timers = [
      // One reading at a time: while one hangs (the database unreachable), none pile up.
      setInterval(() => {
        if (!this.confirmation) void this.confirm();
      }, CONFIRM_EVERY_MS),
      setInterval(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  /** Reads the keys' revision once before serving, so that answers are confirmed at once. */
  async start(): Promise<void> {
    await this.confirm();
  }

  /**
   * The key the secret belongs to, or null when it is malformed, unknown, revoked, expired
   * or an old secret past its grace. `address` is the client's, recorded as its last use.
   */
  async verify(secret: string | undefined, address: string): Promise<AuthenticatedKey | null> {
    if (secret === undefined) return null;
    const secretHash = hashSecret(secret);
    // A kept answer still usable is read as it is; fetch (which shares one lookup between
    // concurrent requests) only when there is none. Only well-formed secrets are looked up
    // and kept, so the shape and checksum need checking only then.
    let entry = this.cache.get(secretHash);
    if (!entry || !this.usable(entry)) {
      if (!isWellFormedSecret(secret)) return null;
      entry = await this.cache.fetch(secretHash);
      // A fresh lookup is this request's answer even if a change is seen while it runs:
      // the two were simultaneous. It is kept under the generation it began in, so the
      // next request looks up again.
      if (entry && !this.usable(entry)) {
        entry = await this.cache.fetch(secretHash, { forceRefresh: true });
      }
    }
    const key = entry?.key ?? null;
    if (!key) return null;
    const now = this.now();
    if (key.expiresAt !== null && key.expiresAt <= now) return null;
    // One record per key until it is written: a request updates it in place.
    const use = this.pendingLastUsed.get(key.id);
    if (use === undefined) this.pendingLastUsed.set(key.id, { at: now, address });
    else {
      use.at = now;
      use.address = address;
    }
    return key;
  }

  private usable(entry: CacheEntry): boolean {
    if (entry.generation !== this.generation) return false;
    return this.monotonic() - Math.max(entry.lookedUpAt, this.confirmedAt) < UNCONFIRMED_MS;
  }

  /**
   * Confirms the answers kept, as of this call: when the keys' revision has not moved
   * since the last reading, every answer that was right then is still right as of when
   * this reading began; when it has, all of them are void. A reading already under way
   * began earlier: it is waited for, and the revision read again.
   */
  async confirm(): Promise<void> {
    while (this.confirmation) await this.confirmation;
    this.confirmation = this.readRevision();
    try {
      await this.confirmation;
    } finally {
      this.confirmation = undefined;
    }
  }

  private async readRevision(): Promise<void> {
    const startedAt = this.monotonic();
    try {
      const revision = await readKeysRevision(this.db);
      if (revision !== this.keysRevision) {
        this.keysRevision = revision;
        this.generation++;
      }
      this.confirmedAt = startedAt;
      this.confirmationFailing = false;
    } catch (error) {
      // Once per outage, not every second.
      if (!this.confirmationFailing) this.events.onError(error, 'confirmation');
      this.confirmationFailing = true;
    }
  }

  async flushLastUsed(): Promise<void> {
    const batch = this.pendingLastUsed;
    if (batch.size === 0) return;
    this.pendingLastUsed = new Map();
    try {
      await recordLastUsed(this.db, this.dialect, batch);
    } catch (error) {
      this.events.onError(error, 'last-used');
    }
  }

  /** Stops the timers and writes what is pending; call before the database closes. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await this.flushLastUsed();
  }
}
