// When a failed delivery is tried again (docs/webhooks.md, "Delivery and retries"; after
// Svix's schedule): quickly at first, for a receiver that was restarting, then hours apart,
// for about three days in all, with the same webhook-id throughout.

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The wait after each failed attempt: the 12th failure is the last (67.6 hours in all). */
const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

/** When deliveries are tried again, how long a claim on one lasts, how often to look. */
export interface WebhookSchedule {
  /** The wait after each failed attempt; the attempt after the last wait is the last. */
  readonly retryDelaysMs: readonly number[];
  /**
   * How long an instance's claim on a delivery lasts: one that died mid-attempt leaves it
   * to another instance after this. An attempt takes at most 10 s (send.ts); the rest is
   * room for writing its outcome.
   */
  readonly leaseMs: number;
  /**
   * How often an idle dispatcher looks for work another process (an import) recorded:
   * the longest a delivery waits for its first attempt.
   */
  readonly pollMs: number;
}

/** The schedule of every deployment; tests give the dispatcher a shorter one. */
export const WEBHOOK_SCHEDULE: WebhookSchedule = Object.freeze({
  retryDelaysMs: Object.freeze(RETRY_DELAYS_MS),
  leaseMs: 30 * SECOND,
  pollMs: SECOND,
});

/**
 * How long after its `attempts`-th failure a delivery is tried again, or undefined when
 * that was the last attempt.
 */
export function retryDelayMs(attempts: number, schedule: WebhookSchedule): number | undefined {
  return schedule.retryDelaysMs[attempts - 1];
}
