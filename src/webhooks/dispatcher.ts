// Sends what the outbox holds (outbox.ts): every `compplan serve` runs one dispatcher, and
// each delivery is claimed by one of them at a time with a lease — PostgreSQL's
// `FOR UPDATE SKIP LOCKED` lets instances claim side by side without waiting on each
// other; SQLite has one writer, so a claim is one atomic UPDATE. A lease an instance does
// not give back (it died mid-attempt) runs out, and another instance takes the delivery
// over: delivery is at least once, with the same webhook-id, so receivers deduplicate.
//
// On SQLite an import holds the write lock for its whole transaction, and better-sqlite3
// waits for a lock on the event loop: the dispatcher's writes never wait (busy_timeout 0
// for their statement) and are tried again a moment later instead, so the API never
// stalls behind an import for a webhook.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { Database } from '../db/types.js';
import { toIso } from '../db/values.js';
import { inWriteTransaction } from '../db/write-transaction.js';
import { allowedRanges } from './address-filter.js';
import { deliveriesWithEventAndEndpoint } from './repository.js';
import { retryDelayMs, WEBHOOK_SCHEDULE, type WebhookSchedule } from './schedule.js';
import { readSealingKey, unsealSecret } from './secret.js';
import { type AttemptResult, attemptDelivery } from './send.js';

// Deliveries attempted at once by one instance.
const BATCH = 10;
// When a write met SQLite's lock (an import), how long until it is tried again.
const LOCKED_RETRY_MS = 250;
// Finished deliveries (and events left without any) are kept this long for `webhooks list`
// and the web page, then deleted, so that the tables do not grow with every import.
const RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'disabled';

export interface DispatcherOptions {
  database: DatabaseHandle;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: readonly string[];
  /** Retry delays, lease and poll; WEBHOOK_SCHEDULE when absent (tests give shorter). */
  schedule?: WebhookSchedule;
  log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
  /** Counts each attempt's outcome (metrics). */
  onOutcome?: (outcome: DeliveryOutcome) => void;
}

interface Claimed {
  id: string;
  endpointId: string;
  attempts: number;
  url: string;
  sealedSecret: string;
  type: string;
  payload: string;
  eventAt: string;
}

class Locked extends Error {}

const isSqliteBusy = (error: unknown) =>
  (error as { code?: string }).code === 'SQLITE_BUSY' ||
  (error as { code?: string }).code === 'SQLITE_BUSY_SNAPSHOT';

export class WebhookDispatcher {
  readonly owner = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private readonly stop = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly allowed;
  private readonly schedule: WebhookSchedule;
  private loop: Promise<void> | undefined;
  private wake: AbortController = new AbortController();
  private sealingKey: Buffer | undefined;
  private nextPruneAt = 0;

  constructor(private readonly options: DispatcherOptions) {
    this.allowed = allowedRanges(options.allowPrivateNetworks);
    this.schedule = options.schedule ?? WEBHOOK_SCHEDULE;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Looks for due deliveries now rather than at the next poll. */
  poke(): void {
    this.wake.abort();
  }

  /**
   * Stops claiming, interrupts the attempts in flight and gives their leases back (the
   * attempt is not counted), so that another instance sends them at once.
   */
  async close(): Promise<void> {
    this.stop.abort();
    this.wake.abort();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  private async run(): Promise<void> {
    while (!this.stop.signal.aborted) {
      let claimed: Claimed[] = [];
      let locked = false;
      try {
        claimed = await this.claim();
      } catch (error) {
        locked = error instanceof Locked;
        if (!locked) {
          this.options.log.warn({ err: error }, 'webhook dispatcher could not claim deliveries');
        }
      }
      if (Date.now() >= this.nextPruneAt) {
        this.nextPruneAt = Date.now() + PRUNE_EVERY_MS;
        await this.prune().catch((error: unknown) => {
          if (!(error instanceof Locked)) {
            this.options.log.warn({ err: error }, 'webhook dispatcher could not prune deliveries');
          }
        });
      }
      for (const delivery of claimed) {
        // Done, it may have set a retry due before the next poll: look again then.
        const work = this.deliver(delivery).finally(() => {
          this.inFlight.delete(work);
          this.poke();
        });
        this.inFlight.add(work);
      }
      if (claimed.length === BATCH) {
        // More may be due: claim again once this batch is done.
        await Promise.all(this.inFlight);
        continue;
      }
      // Due deliveries that an import's lock kept from being claimed: not again at once.
      await this.idle(locked ? LOCKED_RETRY_MS : 20);
    }
  }

  /**
   * Until the next pending delivery falls due (at least `atLeastMs`), or the next poll;
   * woken by poke and close, also while it is looking.
   */
  private async idle(atLeastMs: number): Promise<void> {
    this.wake = new AbortController();
    const { signal } = this.wake;
    const { pollMs } = this.schedule;
    let wait = pollMs;
    try {
      const now = new Date();
      const next = await this.options.database.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.min('next_attempt_at').as('due'))
        .where('state', '=', 'pending')
        .where((eb) =>
          eb.or([
            eb('lease_expires_at', 'is', null),
            eb('lease_expires_at', '<=', now.toISOString()),
          ]),
        )
        .executeTakeFirst();
      if (next?.due) {
        const due = Date.parse(toIso(next.due)) - now.getTime();
        wait = Math.min(pollMs, Math.max(atLeastMs, due));
      }
    } catch {
      // the next claim reports what is wrong
    }
    if (this.stop.signal.aborted) return;
    await sleep(wait, undefined, { signal }).catch(() => undefined);
  }

  /**
   * Runs `work` in a transaction that does not wait for SQLite's write lock: Locked when
   * another writer holds it. PostgreSQL: an ordinary transaction.
   */
  private async write<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    try {
      return await inWriteTransaction(this.options.database.db, work, { wait: false });
    } catch (error) {
      if (isSqliteBusy(error)) throw new Locked();
      throw error;
    }
  }

  /**
   * Deletes deliveries finished (delivered, given up, cancelled) before `now` less
   * RETENTION_MS, and the events of that age no delivery refers to any more.
   */
  async prune(now: Date = new Date()): Promise<void> {
    const before = new Date(now.getTime() - RETENTION_MS).toISOString();
    await this.write(async (db) => {
      await db
        .deleteFrom('webhook_deliveries')
        .where('state', '!=', 'pending')
        .where('created_at', '<', before)
        .execute();
      await db
        .deleteFrom('webhook_events')
        .where('created_at', '<', before)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('webhook_deliveries as d')
                .select('d.id')
                .whereRef('d.event_id', '=', 'webhook_events.id'),
            ),
          ),
        )
        .execute();
    });
  }

  /** Takes up to BATCH due deliveries that no live lease holds. */
  private async claim(): Promise<Claimed[]> {
    const now = new Date();
    const at = now.toISOString();
    const until = new Date(now.getTime() + this.schedule.leaseMs).toISOString();
    const lock = this.options.database.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const ids = await this.write(async (db) => {
      const { rows } = await sql<{ id: string }>`
        update webhook_deliveries set lease_owner = ${this.owner}, lease_expires_at = ${until}
         where id in (
           select id from webhook_deliveries
            where state = 'pending' and next_attempt_at <= ${at}
              and (lease_expires_at is null or lease_expires_at <= ${at})
            order by next_attempt_at
            limit ${BATCH} ${lock})
        returning id`.execute(db);
      return rows.map((row) => row.id);
    });
    if (ids.length === 0) return [];
    const rows = await deliveriesWithEventAndEndpoint(this.options.database.db)
      .select([
        'd.id',
        'd.endpoint_id',
        'd.attempts',
        'w.url',
        'w.sealed_secret',
        'e.type',
        'e.payload',
        'e.created_at',
      ])
      .where('d.id', 'in', ids)
      .where('d.lease_owner', '=', this.owner)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      endpointId: row.endpoint_id,
      attempts: Number(row.attempts),
      url: row.url,
      sealedSecret: row.sealed_secret,
      type: row.type,
      payload: row.payload,
      eventAt: toIso(row.created_at),
    }));
  }

  private async deliver(delivery: Claimed): Promise<void> {
    try {
      this.sealingKey ??= await readSealingKey(this.options.database.db);
      // The stored payload is `data` already as JSON text: the body is built around it,
      // byte for byte the same on every attempt.
      const body = `{"type":${JSON.stringify(delivery.type)},"timestamp":${JSON.stringify(delivery.eventAt)},"data":${delivery.payload}}`;
      const result = await attemptDelivery(
        {
          url: delivery.url,
          id: delivery.id,
          body,
          secret: unsealSecret(this.sealingKey, delivery.sealedSecret),
        },
        this.allowed,
        this.stop.signal,
      );
      await this.record(delivery, result);
    } catch (error) {
      // The lease runs out and the delivery is tried again, by this instance or another.
      this.options.log.warn(
        { err: error, webhookId: delivery.id },
        'webhook delivery outcome could not be recorded',
      );
    }
  }

  /** Writes an attempt's outcome, waiting for SQLite's lock without blocking (see top). */
  private async record(delivery: Claimed, result: AttemptResult): Promise<void> {
    for (;;) {
      try {
        const outcome = await this.write((db) => this.writeOutcome(db, delivery, result));
        if (outcome) {
          this.options.onOutcome?.(outcome);
          this.options.log.info(
            {
              webhookId: delivery.id,
              endpointId: delivery.endpointId,
              type: delivery.type,
              attempt: delivery.attempts + 1,
              outcome,
              ...(result.kind === 'answered' ? { status: result.status } : {}),
              ...(result.kind === 'failed' ? { reason: result.reason } : {}),
            },
            'webhook delivery attempt',
          );
        }
        return;
      } catch (error) {
        if (!(error instanceof Locked)) throw error;
        // Shutting down: the lease runs out instead (the schedule's), rather than the
        // process waiting for an import to commit.
        if (this.stop.signal.aborted) return;
        await sleep(LOCKED_RETRY_MS);
      }
    }
  }

  private async writeOutcome(
    db: Kysely<Database>,
    delivery: Claimed,
    result: AttemptResult,
  ): Promise<DeliveryOutcome | undefined> {
    const mine = db
      .updateTable('webhook_deliveries')
      .where('id', '=', delivery.id)
      .where('lease_owner', '=', this.owner);
    const released = { lease_owner: null, lease_expires_at: null };
    if (result.kind === 'interrupted') {
      await mine.set(released).execute();
      return undefined;
    }
    const now = new Date();
    const attempts = delivery.attempts + 1;
    const attempt = {
      ...released,
      attempts,
      last_attempt_at: now.toISOString(),
      last_status: result.kind === 'answered' ? result.status : null,
      last_response: result.kind === 'answered' ? result.excerpt : result.reason,
    };
    const endpoint = db.updateTable('webhook_endpoints').where('id', '=', delivery.endpointId);

    if (result.kind === 'answered' && result.status >= 200 && result.status < 300) {
      const written = await mine.set({ ...attempt, state: 'delivered' }).executeTakeFirst();
      // Another instance took it over (this lease ran out): its outcome stands.
      if (written.numUpdatedRows === 0n) return undefined;
      await endpoint.set({ status: 'active' }).where('status', '=', 'failing').execute();
      return 'delivered';
    }
    if (result.kind === 'answered' && result.status === 410) {
      // Gone: the receiver asks for no more. Its other pending deliveries go too.
      const written = await mine.set({ ...attempt, state: 'failed' }).executeTakeFirst();
      if (written.numUpdatedRows === 0n) return undefined;
      await endpoint.set({ status: 'disabled' }).execute();
      await db
        .updateTable('webhook_deliveries')
        .set({ ...released, state: 'cancelled' })
        .where('endpoint_id', '=', delivery.endpointId)
        .where('state', '=', 'pending')
        .execute();
      return 'disabled';
    }
    const delay = retryDelayMs(attempts, this.schedule);
    if (delay === undefined) {
      const written = await mine.set({ ...attempt, state: 'failed' }).executeTakeFirst();
      if (written.numUpdatedRows === 0n) return undefined;
      await endpoint.set({ status: 'failing' }).where('status', '=', 'active').execute();
      return 'failed';
    }
    const next = new Date(now.getTime() + delay).toISOString();
    const written = await mine.set({ ...attempt, next_attempt_at: next }).executeTakeFirst();
    return written.numUpdatedRows === 0n ? undefined : 'retrying';
  }
}
