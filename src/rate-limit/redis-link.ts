// The connection to the shared rate-limit store. Redis being down must never take the
// API down: commands fail fast instead of queueing, the client keeps reconnecting in the
// background, and callers ask `usable()` before relying on it.

import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

export type RateLimitStoreState = 'local' | 'redis' | 'local-fallback';

// A rate-limit check may add at most this much to a request when Redis stalls.
const COMMAND_TIMEOUT_MS = 250;
const CONNECT_TIMEOUT_MS = 1_000;
// Reconnect quickly at first, then every second: "back within a second or two".
const reconnectDelay = (attempt: number) => Math.min(attempt * 100, 1_000);

export class RedisLink {
  readonly client: Redis;
  private up = false;

  constructor(
    url: string,
    private readonly log: FastifyBaseLogger,
  ) {
    this.client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: reconnectDelay,
      // Key names carry no secrets, but keep them to one namespace in a shared Redis.
      keyPrefix: 'compplan:',
      // The quota checks of one turn of the event loop (one script call each, from
      // rate-limiter-flexible) go to Redis in one write.
      enableAutoPipelining: true,
    });
    this.client.on('ready', () => {
      this.up = true;
      this.log.info(
        { rateLimitStore: 'redis' },
        'Redis connected: rate limits are shared by every instance',
      );
    });
    this.client.on('error', (error: Error) => this.markDown(error));
    this.client.on('close', () => this.markDown());
  }

  /** True while commands can be sent; false means: count in this process for now. */
  usable(): boolean {
    return this.up && this.client.status === 'ready';
  }

  state(): RateLimitStoreState {
    return this.usable() ? 'redis' : 'local-fallback';
  }

  /**
   * A command failed although the link looked up (a timeout, a reset): stop using it.
   * A connection that still looks open (Redis stalled, then timed out) is dropped and
   * reopened, so that the `ready` of the new connection brings the link back.
   */
  markDown(error?: Error): void {
    if (!this.up) return;
    this.up = false;
    if (this.client.status === 'ready') this.client.disconnect(true);
    this.log.warn(
      { rateLimitStore: 'local-fallback', err: error },
      'Redis unavailable: rate limits are per instance until it is back',
    );
  }

  async close(): Promise<void> {
    this.client.disconnect(false);
  }
}
