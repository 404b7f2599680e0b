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

/**
 * How long after its `attempts`-th failure a delivery is tried again, or undefined when
 * that was the last attempt. `scale` is WEBHOOK_SCHEDULE_SCALE (test-only; 1 otherwise).
 */
export function retryDelayMs(attempts: number, scale: number): number | undefined {
  const delay = RETRY_DELAYS_MS[attempts - 1];
  return delay === undefined ? undefined : Math.round(delay * scale);
}
