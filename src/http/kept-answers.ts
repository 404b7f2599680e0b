// The store behind the response cache (response-cache.ts): answers by organisation and
// URL, least recently used first out, bounded in bytes overall and per organisation.
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
  private readonly organizationBytes = new Map<string, number>();

  constructor(private readonly limits: KeptAnswersLimits) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: limits.bytes,
      maxEntrySize: Math.min(limits.answerBytes, limits.organizationBytes),
      sizeCalculation: sizeOf,
      ttl: limits.maxAgeMs,
      // Whatever takes an entry out (eviction, replacement, expiry, delete) gives its
      // bytes back to its organisation's share.
      dispose: (entry, key) => this.count(entry.organizationId, -sizeOf(entry, key)),
    });
  }

  get(organizationId: string, url: string): KeptAnswer | undefined {
    return this.entries.get(keyOf(organizationId, url));
  }

  /** Keeps an answer, replacing any kept for the same organisation and URL. */
  keep(organizationId: string, url: string, answer: KeptAnswer): void {
    this.put(keyOf(organizationId, url), { ...answer, organizationId }, false);
  }

  /** Adds the body in one more encoding to a kept answer, which keeps its age. */
  addEncoding(organizationId: string, url: string, encoding: Encoding, encoded: Buffer): void {
    const key = keyOf(organizationId, url);
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
    // The record this one replaces gives its bytes back.
    const replaced = this.entries.peek(key);
    const room = () =>
      this.limits.organizationBytes -
      this.bytesOf(organizationId) +
      (replaced && this.entries.has(key) ? sizeOf(replaced, key) : 0);
    if (size > room()) {
      this.entries.purgeStale();
      // Listed first, deleted after: the cache's order must not change under its iterator.
      const own = [...this.entries.rkeys()].filter((kept) => kept.startsWith(`${organizationId} `));
      for (const kept of own) {
        if (size <= room()) break;
        this.entries.delete(kept);
      }
    }
    this.entries.set(key, entry, { noUpdateTTL: keepAge });
    this.count(organizationId, size);
  }

  /** Bytes kept for the organisation. */
  bytesOf(organizationId: string): number {
    return this.organizationBytes.get(organizationId) ?? 0;
  }

  /** Bytes kept in all. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  private count(organizationId: string, bytes: number): void {
    const total = this.bytesOf(organizationId) + bytes;
    if (total > 0) this.organizationBytes.set(organizationId, total);
    else this.organizationBytes.delete(organizationId);
  }
}

// The organisation first: one organisation's answers are never another's, whatever the URL.
const keyOf = (organizationId: string, url: string) => `${organizationId} ${url}`;
