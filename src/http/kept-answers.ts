// The store behind the response cache (response-cache.ts): answers by reader (what a key
// may read: its organisation, and a restricted key's cycles and hidden columns) and URL,
// least recently used first out, bounded in bytes overall and per organisation (the
// readers of one organisation share its share).
// The share bounds what one organisation's reads can push out: one that walks hundreds of
// pages fills its own share, not the whole cache, and the others' answers stay.
import { LRUCache } from 'lru-cache';
import type { Encoding } from './compression.js';

export interface KeptAnswer {
  body: Buffer;
  contentType: string;
  /** The data revision read before the answer was built. */
  revision: number;
  /** The body in each encoding a client has asked for so far. */
  encoded: Partial<Record<Encoding, Buffer>>;
  /** Employees in the answer, for the audit log of the requests it is sent again to. */
  employees: number;
  /** The column keys it serves, as the audit log records them (src/audit/columns-served.ts). */
  columnsServed: string | null;
}

/** Who an answer was built for (ReadScope is one). */
export interface Reader {
  readonly organizationId: string;
  /** Equal for readers that may see the same; starts with the organisation id. */
  readonly fingerprint: string;
}

export interface KeptAnswersLimits {
  /** Bytes of every answer together. */
  bytes: number;
  /** Bytes of one organisation's answers together. */
  organizationBytes: number;
  /** An answer larger than this is not kept. */
  answerBytes: number;
  /** No answer is kept longer. */
  maxAgeMs: number;
}

// Per entry beyond its bytes: the key, the record and the cache's own bookkeeping.
const ENTRY_OVERHEAD_BYTES = 200;

/** One organisation's kept answers: their bytes, and their keys least recently used first. */
interface Share {
  bytes: number;
  sizes: Map<string, number>;
}

interface Entry extends KeptAnswer {
  organizationId: string;
}

const sizeOf = (entry: Entry, key: string) =>
  entry.body.length +
  Object.values(entry.encoded).reduce((bytes, encoded) => bytes + encoded.length, 0) +
  key.length * 2 +
  ENTRY_OVERHEAD_BYTES;

export class KeptAnswers {
  private readonly entries: LRUCache<string, Entry>;
  /**
   * Each organisation's kept keys with their sizes, least recently used first (a Map
   * keeps insertion order; a read moves its key to the end): the answers that go first
   * when the organisation is over its share are found without looking at anyone else's.
   */
  private readonly byOrganization = new Map<string, Share>();

  /**
   * `clock`: what an answer's age is measured with (performance.now() when absent); a
   * test's clock is read on every call, so that a move of it is seen at once.
   */
  constructor(
    private readonly limits: KeptAnswersLimits,
    clock?: { now(): number },
  ) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: limits.bytes,
      maxEntrySize: Math.min(limits.answerBytes, limits.organizationBytes),
      sizeCalculation: sizeOf,
      ttl: limits.maxAgeMs,
      ...(clock && { perf: clock, ttlResolution: 0 }),
      // Whatever takes an entry out (eviction, replacement, expiry, delete) takes it out of
      // its organisation's share too.
      dispose: (entry, key) => this.forget(entry.organizationId, key),
    });
  }

  get(reader: Reader, url: string): KeptAnswer | undefined {
    const key = keyOf(reader, url);
    const entry = this.entries.get(key);
    if (entry !== undefined) this.touch(reader.organizationId, key);
    return entry;
  }

  /** Keeps an answer, replacing any kept for the same reader and URL. */
  keep(reader: Reader, url: string, answer: KeptAnswer): void {
    this.put(keyOf(reader, url), { ...answer, organizationId: reader.organizationId }, false);
  }

  /** Adds the body in one more encoding to a kept answer, which keeps its age. */
  addEncoding(reader: Reader, url: string, encoding: Encoding, encoded: Buffer): void {
    const key = keyOf(reader, url);
    const current = this.entries.peek(key);
    if (current === undefined) return;
    this.put(key, { ...current, encoded: { ...current.encoded, [encoding]: encoded } }, true);
  }

  // A new record each time: the cache sizes a value when it is set, not again if the
  // same object is set again. Room is made first within the organisation's share: its
  // least recently used answers go.
  private put(key: string, entry: Entry, keepAge: boolean): void {
    const { organizationId } = entry;
    const size = sizeOf(entry, key);
    if (size > this.entries.maxEntrySize) {
      this.entries.delete(key);
      return;
    }
    const own = this.byOrganization.get(organizationId);
    if (own) {
      // The record this one replaces gives its bytes back when it is replaced.
      const replaced = own.sizes.get(key) ?? 0;
      for (const oldest of own.sizes.keys()) {
        if (own.bytes - replaced + size <= this.limits.organizationBytes) break;
        if (oldest !== key) this.entries.delete(oldest);
      }
    }
    this.entries.set(key, entry, { noUpdateTTL: keepAge });
    if (this.entries.has(key)) {
      const share = this.byOrganization.get(organizationId) ?? { bytes: 0, sizes: new Map() };
      share.sizes.set(key, size);
      share.bytes += size;
      this.byOrganization.set(organizationId, share);
    }
  }

  /** Bytes kept for the organisation. */
  bytesOf(organizationId: string): number {
    return this.byOrganization.get(organizationId)?.bytes ?? 0;
  }

  /** Bytes kept in all. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  private touch(organizationId: string, key: string): void {
    const sizes = this.byOrganization.get(organizationId)?.sizes;
    const size = sizes?.get(key);
    if (sizes === undefined || size === undefined) return;
    sizes.delete(key);
    sizes.set(key, size);
  }

  private forget(organizationId: string, key: string): void {
    const share = this.byOrganization.get(organizationId);
    const size = share?.sizes.get(key);
    if (share === undefined || size === undefined) return;
    share.sizes.delete(key);
    share.bytes -= size;
    if (share.sizes.size === 0) this.byOrganization.delete(organizationId);
  }
}

// The reader first: one organisation's or scope's answers are never another's, whatever
// the URL (a fingerprint holds no space, so the URL is everything after the first one).
const keyOf = (reader: Reader, url: string) => `${reader.fingerprint} ${url}`;
