// Turns an x-api-key header into the key and organisation it authenticates, fast:
// malformed keys are refused without touching the database, and database answers are
// cached for a few seconds. Revocation is honoured within CACHE_TTL_MS on every
// instance, because each instance forgets what it cached by then.
import { LRUCache } from 'lru-cache';
import type { Db, Dialect } from '../../db/connect.js';
import { type ActiveKey, findActiveKeyByHash, recordLastUsed } from './repository.js';
import { hashSecret, isWellFormedSecret } from './secret.js';

/** The key and organisation a request authenticates as. */
export type AuthenticatedKey = Readonly<ActiveKey>;

// decisions.md: a revoked key gets 401 within 5 s on every instance. 4 s leaves a second
// for the request that is already in flight.
const CACHE_TTL_MS = 4_000;
// Bounded so that a flood of well-formed but unknown keys cannot grow memory; such a
// flood is also throttled per client address by the failed-authentication limit.
const CACHE_MAX_ENTRIES = 10_000;
// last_used_at is written in batches, not on every request: it is accurate to this.
const LAST_USED_FLUSH_MS = 15_000;

type CacheEntry = { key: AuthenticatedKey | null };

export class ApiKeyVerifier {
  private readonly cache: LRUCache<string, CacheEntry>;
  /** Key id → when it was last used (ms since the epoch): a number per request, text only
   * when written. */
  private pendingLastUsed = new Map<string, number>();
  private readonly flushTimer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly onFlushError: (error: unknown) => void,
  ) {
    this.cache = new LRUCache<string, CacheEntry>({
      max: CACHE_MAX_ENTRIES,
      ttl: CACHE_TTL_MS,
      // Concurrent requests with the same new key share one database lookup.
      fetchMethod: async (secretHash) => ({
        key: (await findActiveKeyByHash(this.db, secretHash)) ?? null,
      }),
    });
    this.flushTimer = setInterval(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS);
    this.flushTimer.unref();
  }

  /** The key the secret belongs to, or null when it is malformed, unknown or revoked. */
  async verify(secret: string | undefined): Promise<AuthenticatedKey | null> {
    if (secret === undefined || !isWellFormedSecret(secret)) return null;
    const entry = await this.cache.fetch(hashSecret(secret));
    const key = entry?.key ?? null;
    if (key) this.pendingLastUsed.set(key.id, Date.now());
    return key;
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

  /** Stops the timer and writes what is pending; call before the database closes. */
  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushLastUsed();
  }
}
