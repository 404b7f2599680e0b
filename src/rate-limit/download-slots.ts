// One bulk download per key at a time (docs/bulk-download.md, "One download per key"):
// a download holds its key's slot from its start until its response closes, whether it
// ended or its client left. The slot is kept in Redis while it is usable, so that it holds
// across every instance, and in this process too, so that Redis trouble neither fails a
// download nor lets a second one start on this instance.
//
// In Redis a slot is a lease: a key that expires unless the instance holding it renews
// it. An instance that crashes mid-download leaves its slot behind for at most a lease,
// not for ever.
import { randomUUID } from 'node:crypto';
import type { RedisLink } from './redis-link.js';

// How long a slot lasts in Redis unless renewed, and how often a download renews it.
const LEASE_MS = 30_000;
const RENEW_EVERY_MS = 10_000;
/** What a second download is told to wait: about what a large cycle's download takes. */
export const DOWNLOAD_RETRY_AFTER_SECONDS = 10;

// Renews or releases a slot only while it is still the one this download took: a lease
// that expired and was taken by another download is not this one's to touch.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

export interface DownloadSlot {
  /** Gives the slot back; calling it again does nothing. */
  release(): void;
}

export class DownloadSlots {
  /** The keys with a download in progress on this instance. */
  private readonly local = new Set<string>();

  constructor(private readonly link: RedisLink | undefined) {}

  /** The key's slot, or undefined while another download of the key is in progress. */
  async take(keyId: string): Promise<DownloadSlot | undefined> {
    if (this.local.has(keyId)) return undefined;
    this.local.add(keyId);
    const name = `bulk-download:${keyId}`;
    const token = randomUUID();
    const shared = await this.takeShared(name, token);
    if (shared === 'taken') {
      this.local.delete(keyId);
      return undefined;
    }
    const renewal =
      shared === 'held'
        ? setInterval(() => {
            this.command((client) => client.eval(RENEW, 1, name, token, LEASE_MS));
          }, RENEW_EVERY_MS).unref()
        : undefined;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.local.delete(keyId);
        clearInterval(renewal);
        if (shared === 'held') this.command((client) => client.eval(RELEASE, 1, name, token));
      },
    };
  }

  /** 'held' in Redis, 'taken' by a download elsewhere, 'local' when Redis is not usable. */
  private async takeShared(name: string, token: string): Promise<'held' | 'taken' | 'local'> {
    const link = this.link;
    if (!link?.usable()) return 'local';
    try {
      const set = await link.client.set(name, token, 'PX', LEASE_MS, 'NX');
      return set === 'OK' ? 'held' : 'taken';
    } catch (error) {
      link.markDown(error as Error);
      return 'local';
    }
  }

  /** A renewal or release: when Redis fails it, the lease runs out by itself. */
  private command(send: (client: RedisLink['client']) => Promise<unknown>): void {
    const link = this.link;
    if (!link?.usable()) return;
    send(link.client).catch((error: Error) => link.markDown(error));
  }
}
