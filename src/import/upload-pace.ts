// An upload is timed by its progress, not as a whole request (docs/web-app.md, "Safety";
// SERVER_TIMEOUTS in src/app.ts): 100 MB over a slow office line arrives, however long it
// takes, while a client that stops sending, or trickles, is cut off. The upload route is
// left out of the whole-request bound (src/http/request-deadline.ts) and watched here.

export interface UploadPace {
  /** Cut off when nothing arrived for this long. */
  idleMs: number;
  /** Cut off when less than this arrived, per second, over each `idleMs`. */
  minBytesPerSecond: number;
  /** How often the pace is looked at. */
  checkIntervalMs: number;
}

/** The upload stopped (nothing for `idleMs`) or went too slowly to finish. */
export class UploadTooSlowError extends Error {
  override name = 'UploadTooSlowError';
  constructor(readonly stalled: boolean) {
    super(stalled ? 'the upload stalled' : 'the upload was too slow');
  }
}

export interface PaceWatch {
  /** `bytes` more arrived. */
  arrived(bytes: number): void;
  stop(): void;
}

/** Watches an upload's bytes; `cut` is called once when it stalls or is too slow. */
export function watchPace(
  pace: UploadPace,
  cut: (error: UploadTooSlowError) => void,
  now: () => number = Date.now,
): PaceWatch {
  let last = now();
  let windowStart = last;
  let windowBytes = 0;
  const timer = setInterval(
    () => {
      const at = now();
      if (at - last >= pace.idleMs) return stop(new UploadTooSlowError(true));
      if (at - windowStart >= pace.idleMs) {
        const expected = (pace.minBytesPerSecond * (at - windowStart)) / 1000;
        if (windowBytes < expected) return stop(new UploadTooSlowError(false));
        windowStart = at;
        windowBytes = 0;
      }
    },
    Math.min(pace.checkIntervalMs, pace.idleMs),
  );
  timer.unref();
  function stop(error?: UploadTooSlowError) {
    clearInterval(timer);
    if (error) cut(error);
  }
  return {
    arrived(bytes) {
      last = now();
      windowBytes += bytes;
    },
    stop: () => stop(),
  };
}
