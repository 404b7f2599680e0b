// Each instance's request entries, kept in memory and written in batches: at the latest a
// second after the request, or as soon as a batch is full (docs/security.md, "Audit log").
// A request never waits for the log: its entry is pushed after the answer has gone, and
// the writing happens on its own.
//
// When the database refuses the writes (full disk, PostgreSQL down, an import holding
// SQLite's lock), the entries stay in memory and are tried again every second, up to
// MAX_BUFFERED; entries past that bound are dropped, counted (a metric) and logged, so that
// an outage costs entries, never memory without bound nor the API's answers.
import type { RequestEntry } from './entry.js';
import { ENTRIES_PER_STATEMENT } from './repository.js';

/** The longest an entry waits in memory while the database takes writes. */
export const FLUSH_EVERY_MS = 1_000;
/** Entries kept while the database refuses them: a few hundred bytes each, about 30 MB. */
export const MAX_BUFFERED = 100_000;
// One transaction writes at most this many: a long backlog goes in several rounds, each
// holding SQLite's writer (and so the API's reads of this process) briefly.
const ENTRIES_PER_FLUSH = 10 * ENTRIES_PER_STATEMENT;

/**
 * Writes a batch of request entries; `wait`: for another writer's lock, as at shutdown.
 * In `compplan serve`'s thread on SQLite, else on the event loop (writer-thread.ts).
 */
export type WriteEntries = (entries: readonly RequestEntry[], wait: boolean) => Promise<void>;

export interface WriterEvents {
  written(count: number): void;
  /** Entries given up: the buffer was full, or the last flush at shutdown failed. */
  dropped(count: number, reason: 'buffer-full' | 'shutdown'): void;
  /** Writes began to fail (once until one succeeds again), or succeed again. */
  failing(error: unknown): void;
  recovered(): void;
}

export class AuditWriter {
  private pending: RequestEntry[] = [];
  private flushing: Promise<void> | undefined;
  private failing = false;
  /** Set by close: the last rounds wait for another writer (SQLite) like any writer. */
  private closing = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    /** Its writer thread's, or straight to the database (writer-thread.ts). */
    private readonly write: WriteEntries,
    private readonly events: WriterEvents,
    /** MAX_BUFFERED; tests set a small bound to reach it. */
    private readonly maxBuffered = MAX_BUFFERED,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  /** Entries waiting to be written. */
  get buffered(): number {
    return this.pending.length;
  }

  push(entry: RequestEntry): void {
    if (this.pending.length >= this.maxBuffered) {
      this.events.dropped(1, 'buffer-full');
      return;
    }
    this.pending.push(entry);
    if (this.pending.length === ENTRIES_PER_STATEMENT && !this.failing) void this.flush();
  }

  /** Writes what is waiting (one round); a round already under way is waited for instead. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.length === 0) return Promise.resolve();
    this.flushing = this.writeRound().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeRound(): Promise<void> {
    const batch = this.pending.slice(0, ENTRIES_PER_FLUSH);
    this.pending = this.pending.slice(batch.length);
    try {
      await this.write(batch, this.closing);
      this.events.written(batch.length);
      if (this.failing) this.events.recovered();
      this.failing = false;
    } catch (error) {
      // Kept, in order, ahead of what arrived meanwhile; the oldest go past the bound.
      const kept = batch.concat(this.pending);
      const excess = kept.length - this.maxBuffered;
      this.pending = excess > 0 ? kept.slice(excess) : kept;
      if (excess > 0) this.events.dropped(excess, 'buffer-full');
      if (!this.failing) this.events.failing(error);
      this.failing = true;
    }
  }

  /**
   * Stops the timer and writes everything waiting (on SIGTERM, before the database
   * closes); what the database still refuses then is counted as dropped.
   */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.closing = true;
    await this.flushing;
    while (this.pending.length > 0) {
      const before = this.pending.length;
      await this.flush();
      if (this.pending.length >= before) {
        this.events.dropped(this.pending.length, 'shutdown');
        this.pending = [];
      }
    }
  }
}
