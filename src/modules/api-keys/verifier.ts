// Turns an x-api-key header into the key and organisation it authenticates, fast:
// malformed keys are refused without touching the database, and database answers are
// cached for a few seconds. Revocation is honoured within CACHE_TTL_MS on every
// instance, because each instance forgets what it cached by then.
//
// The keys in use are confirmed together: every CONFIRM_EVERY_MS one query (a statement
// per 500 keys) looks up again every key used in the last CONFIRM_WHILE_USED_MS, and
// renews its answer, or refuses it from then on if it was revoked. A key in use — also
// one used in bursts, minutes apart — is thus never looked up on its own and its
// requests never wait for the database; with one lookup a key every 4 s, 3,000 keys in
// use made 750 round trips a second to PostgreSQL, and a burst after a pause of more
// than 4 s began with a lookup of each key (docs/benchmarks.md). Should the rounds fail,
// answers still expire CACHE_TTL_MS after the lookup that gave them began.
import { LRUCache } from 'lru-cache';
import type { Db, Dialect } from '../../db/connect.js';
import {
  type ActiveKey,
  findActiveKeyByHash,
  findActiveKeysByHash,
  recordLastUsed,
} from './repository.js';
import { hashSecret, isWellFormedSecret } from './secret.js';

/** The key and organisation a request authenticates as. */
export type AuthenticatedKey = Readonly<ActiveKey>;

// decisions.md: a revoked key gets 401 within 5 s on every instance. 4 s, counted from
// when the lookup began, leaves a second for the request that is already in flight.
export const CACHE_TTL_MS = 4_000;
export const CONFIRM_EVERY_MS = 1_000;
export const CONFIRM_WHILE_USED_MS = 60_000;
// Bounded so that a flood of well-formed but unknown keys cannot grow memory; such a
// flood is also throttled per client address by the failed-authentication limit.
const CACHE_MAX_ENTRIES = 10_000;
// last_used_at is written in batches, not on every request: it is accurate to this.
const LAST_USED_FLUSH_MS = 15_000;

type CacheEntry = { key: AuthenticatedKey | null };

/** Milliseconds from an arbitrary origin: performance.now(), but in tests. */
export interface Clock {
  now(): number;
}

export class ApiKeyVerifier {
  private readonly cache: LRUCache<string, CacheEntry>;
  /** Secret hash of each valid key used in the last CONFIRM_WHILE_USED_MS → when. */
  private recentlyUsed = new Map<string, number>();
  private confirming = false;
  /** Key id → when it was last used (ms since the epoch), written by flushLastUsed. */
  private pendingLastUsed = new Map<string, number>();
  private readonly timers: NodeJS.Timeout[];

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly onFlushError: (error: unknown) => void,
    private readonly clock: Clock = performance,
  ) {
    this.cache = new LRUCache<string, CacheEntry>({
      max: CACHE_MAX_ENTRIES,
      ttl: CACHE_TTL_MS,
      perf: clock,
      // The clock is read at every look (lru-cache would keep a reading for a millisecond).
      ttlResolution: 0,
      // Concurrent requests with the same new key share one database lookup.
      fetchMethod: async (secretHash, _stale, { options }) => {
        const began = clock.now();
        const key = (await findActiveKeyByHash(this.db, secretHash)) ?? null;
        options.ttl = this.ttlSince(began);
        return { key };
      },
    });
    this.timers = [
      setInterval(() => void this.confirmKeysInUse(), CONFIRM_EVERY_MS),
      setInterval(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  /** The key the secret belongs to, or null when it is malformed, unknown or revoked. */
  async verify(secret: string | undefined): Promise<AuthenticatedKey | null> {
    if (secret === undefined || !isWellFormedSecret(secret)) return null;
    const secretHash = hashSecret(secret);
    const entry = await this.cache.fetch(secretHash);
    const key = entry?.key ?? null;
    if (key) {
      this.recentlyUsed.set(secretHash, this.clock.now());
      this.pendingLastUsed.set(key.id, Date.now());
    }
    return key;
  }

  /**
   * One confirmation round: the keys used in the last CONFIRM_WHILE_USED_MS, looked up
   * together; each answer renewed from when the round began, or turned into a refusal.
   * A round still running when the next is due is not overlapped; a failed one renews
   * nothing.
   */
  async confirmKeysInUse(): Promise<void> {
    if (this.confirming) return;
    const began = this.clock.now();
    const hashes: string[] = [];
    for (const [secretHash, usedAt] of this.recentlyUsed) {
      if (began - usedAt < CONFIRM_WHILE_USED_MS) hashes.push(secretHash);
      else this.recentlyUsed.delete(secretHash);
    }
    if (hashes.length === 0) return;
    this.confirming = true;
    try {
      const active = await findActiveKeysByHash(this.db, hashes);
      const ttl = this.ttlSince(began);
      for (const secretHash of hashes) {
        // Only answers still held: one the cache has let go is looked up when next used.
        if (!this.cache.has(secretHash)) continue;
        this.cache.set(secretHash, { key: active.get(secretHash) ?? null }, { ttl });
      }
    } catch {
      // The answers expire on their own; the next request of each key looks it up, and
      // should the database still fail, is answered as any failure is.
    } finally {
      this.confirming = false;
    }
  }

  // An answer lives CACHE_TTL_MS from when its lookup began, however long that took (a
  // ttl of 0 would mean "never expires": a lookup that took longer is kept 1 ms).
  private ttlSince(began: number): number {
    return Math.max(1, CACHE_TTL_MS - (this.clock.now() - began));
  }

  async flushLastUsed(): Promise<void> {
    const batch = this.pendingLastUsed;
    if (batch.size === 0) return;
    this.pendingLastUsed = new Map();
    try {
      const usedAt = new Map([...batch].map(([id, at]) => [id, new Date(at).toISOString()]));
      await recordLastUsed(this.db, this.dialect, usedAt);
    } catch (error) {
      this.onFlushError(error);
    }
  }

  /** Stops the timers and writes what is pending; call before the database closes. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await this.flushLastUsed();
  }
}
