// One GET, with what a long-running reader of a rate-limited API needs: pacing from the
// server's rate-limit headers (so that a long export meets no 429), retries of what can
// succeed on a second try, one backoff shared by every request in flight, timeouts and
// cancellation. Only `fetch`, `AbortSignal` and timers: Node.js 20+ and browsers alike.
import {
  CompplanError,
  ConnectionError,
  errorFromResponse,
  retryAfterSeconds,
  TimeoutError,
} from './errors.js';

export interface TransportOptions {
  /** e.g. `https://compplan.example.com` or `http://localhost:3000`. */
  baseUrl: string;
  /** The API key, sent as the x-api-key header. */
  apiKey: string;
  /** The fetch to use; the global fetch when absent. */
  fetch?: typeof fetch;
  /** Milliseconds one attempt may take, response body included. Default 30,000. */
  timeoutMs?: number;
  /** Further attempts after a 429, a 503 or a connection error. Default 4. */
  maxRetries?: number;
  /** Backoff: the first retry waits up to `baseMs`, doubling per retry up to `maxMs`. */
  backoff?: { baseMs?: number; maxMs?: number };
  /**
   * Space requests by the quota the server announces (RateLimit-Policy), so that this
   * client never exceeds it. Default true; false sends as fast as the caller asks.
   */
  pacing?: boolean;
}

export interface RequestOptions {
  /** Cancels the request (and any wait before it); the promise rejects with its reason. */
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this request. */
  timeoutMs?: number;
}

export type Query = Record<string, string | number | undefined>;

// The window is taken a little longer than the server's (1% and 10 ms: 1,020 ms for a
// one-second window), for clocks that tick differently and timers that fire early.
const PACING_MARGIN = 1.01;
const PACING_SLACK_MS = 10;
const MAX_PACED_QUOTA = 10_000;

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    if (ms <= 0) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** One request as pacing sees it: answered once its response (or its failure) arrived. */
interface Sent {
  /** When the answer arrived; Infinity while the request is in flight. */
  answeredAt: number;
  answered: Promise<void>;
}

/**
 * When the next request may leave. Shared by every request of one client: the quota
 * spaces them, and a backoff set by any one of them holds back all of them, because a 429
 * or a 503 says something about the key or the server, not the request.
 *
 * Pacing remembers the last `quota` requests: request n may leave one window (plus a
 * margin) after request n − quota was *answered*. The server counted that request before
 * it answered, so whatever window it opened or joined has ended by then, however late the
 * server counted it: no window of the server's holds more than `quota` of our requests,
 * and a request that was answered late does not slow the ones after it.
 */
class Gate {
  private quota = 0;
  private windowMs = 0;
  private readonly sent: Sent[] = [];
  private pausedUntil = 0;
  /** While the quota is not known yet, one request at a time finds it out. */
  private probe: Promise<void> | null = null;

  constructor(private readonly pacing: boolean) {}

  /** Waits for this request's turn; call the returned function when it is answered. */
  async acquire(signal: AbortSignal | undefined): Promise<() => void> {
    while (this.pacing && this.quota === 0 && this.probe) await abortable(this.probe, signal);
    let endProbe = () => {};
    if (this.pacing && this.quota === 0) {
      this.probe = new Promise<void>((resolve) => {
        endProbe = () => {
          this.probe = null;
          resolve();
        };
      });
    }
    let entry: Sent | undefined;
    let resolveAnswered = () => {};
    try {
      await this.turn(signal);
      if (this.pacing && this.quota <= MAX_PACED_QUOTA) {
        entry = {
          answeredAt: Number.POSITIVE_INFINITY,
          answered: new Promise<void>((resolve) => {
            resolveAnswered = resolve;
          }),
        };
        this.sent.push(entry);
        if (this.sent.length > Math.max(this.quota, 1)) this.sent.shift();
      }
    } catch (error) {
      endProbe();
      throw error;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (entry) entry.answeredAt = Date.now();
      resolveAnswered();
      endProbe();
    };
  }

  private async turn(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const now = Date.now();
      if (this.pausedUntil > now) {
        await sleep(this.pausedUntil - now, signal);
        continue;
      }
      // A quota too large to reach needs no pacing.
      const paced = this.quota > 0 && this.quota <= MAX_PACED_QUOTA;
      const oldest = paced ? this.sent[this.sent.length - this.quota] : undefined;
      if (oldest && oldest.answeredAt === Number.POSITIVE_INFINITY) {
        await abortable(oldest.answered, signal);
        continue;
      }
      const earliest = oldest === undefined ? now : oldest.answeredAt + this.windowMs;
      if (earliest > now) {
        await sleep(earliest - now, signal);
        continue;
      }
      return;
    }
  }

  /** The quota the server announced: `quota` requests per window of `windowMs`. */
  learn(quota: number, windowMs: number): void {
    this.quota = quota;
    this.windowMs = windowMs * PACING_MARGIN + PACING_SLACK_MS;
  }

  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function abortable(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** `"default";q=10;w=1` → 10 requests per 1,000 ms; undefined when absent or unreadable. */
export function parsePolicy(
  policy: string | null,
): { quota: number; windowMs: number } | undefined {
  if (!policy) return undefined;
  const quota = /(?:^|;)\s*q=(\d+)/.exec(policy)?.[1];
  const window = /(?:^|;)\s*w=(\d+)/.exec(policy)?.[1];
  if (!quota || !window || Number(quota) <= 0 || Number(window) <= 0) return undefined;
  return { quota: Number(quota), windowMs: Number(window) * 1000 };
}

export interface ApiResponse<T> {
  body: T;
  status: number;
  headers: Headers;
}

export class Transport {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly gate: Gate;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly pacing: boolean;

  constructor(private readonly options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError('compplan client: baseUrl is required');
    if (!options.apiKey) throw new TypeError('compplan client: apiKey is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const givenFetch = options.fetch ?? globalThis.fetch;
    if (typeof givenFetch !== 'function') {
      throw new TypeError('compplan client: no fetch; pass one as the fetch option');
    }
    // Called unbound, a browser's fetch throws "Illegal invocation".
    this.fetch = (input, init) => givenFetch(input, init);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 4;
    this.baseMs = options.backoff?.baseMs ?? 500;
    this.maxMs = options.backoff?.maxMs ?? 20_000;
    this.pacing = options.pacing ?? true;
    this.gate = new Gate(this.pacing);
  }

  async get<T>(
    path: string,
    query: Query = {},
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const target = withQuery(path, query);
    const what = `GET ${path}`;
    for (let attempt = 0; ; attempt++) {
      const answered = await this.gate.acquire(options.signal);
      const outcome = await this.attempt<T>(target, what, options, answered).finally(answered);
      if (!(outcome instanceof Failure)) return outcome;
      if (!outcome.retryable || attempt >= this.maxRetries) throw outcome.error;
      // Retry-After is honoured as a floor; the jitter spreads clients that were told
      // the same thing.
      this.gate.pause(Math.max(outcome.retryAfterMs ?? 0, this.jitter(attempt)));
    }
  }

  /**
   * One GET whose body the caller reads as a stream (a bulk download): paced and retried
   * as `get` is until its response begins, which is all the timeout covers. The response
   * is returned once it is 200 or 304; its body is the caller's to read or cancel.
   */
  async open(path: string, query: Query = {}, options: RequestOptions = {}): Promise<Response> {
    const target = withQuery(path, query);
    const what = `GET ${path}`;
    for (let attempt = 0; ; attempt++) {
      const answered = await this.gate.acquire(options.signal);
      const outcome = await this.attemptOpen(target, what, options, answered).finally(answered);
      if (!(outcome instanceof Failure)) return outcome;
      if (!outcome.retryable || attempt >= this.maxRetries) throw outcome.error;
      this.gate.pause(Math.max(outcome.retryAfterMs ?? 0, this.jitter(attempt)));
    }
  }

  private async attemptOpen(
    target: string,
    what: string,
    options: RequestOptions,
    answered: () => void,
  ): Promise<Response | Failure> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    // Not AbortSignal.timeout: that would also cut the body off, however long it rightly takes.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const signal = options.signal
      ? AbortSignal.any([options.signal, timeout.signal])
      : timeout.signal;
    let response: Response;
    try {
      response = await this.fetch(`${this.baseUrl}${target}`, {
        method: 'GET',
        headers: { 'x-api-key': this.options.apiKey },
        signal,
      });
      answered();
    } catch (cause) {
      if (options.signal?.aborted) throw options.signal.reason;
      return this.unanswered(what, timeout.signal.aborted, timeoutMs, cause);
    } finally {
      clearTimeout(timer);
    }
    this.observe(response.headers);
    if (response.ok || response.status === 304) return response;
    const text = await response.text().catch(() => '');
    return this.refused(response, text, what);
  }

  /** Full jitter (a uniform wait up to the exponential bound): retries do not bunch up. */
  private jitter(attempt: number): number {
    return Math.random() * Math.min(this.maxMs, this.baseMs * 2 ** attempt);
  }

  private async attempt<T>(
    target: string,
    what: string,
    options: RequestOptions,
    answered: () => void,
  ): Promise<ApiResponse<T> | Failure> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await this.fetch(`${this.baseUrl}${target}`, {
        method: 'GET',
        headers: { accept: 'application/json', 'x-api-key': this.options.apiKey },
        signal,
      });
      // The server has counted the request once its response begins.
      answered();
      text = await response.text();
    } catch (cause) {
      // The caller's own cancellation is not an error of ours: it ends with its reason.
      if (options.signal?.aborted) throw options.signal.reason;
      return this.unanswered(what, timeout.aborted, options.timeoutMs ?? this.timeoutMs, cause);
    }
    this.observe(response.headers);
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    if (response.ok) {
      if (typeof body !== 'object' || body === null) {
        return new Failure(
          new CompplanError({
            message: `${what}: ${response.status} with a body that is not JSON`,
            status: response.status,
            requestId: response.headers.get('x-request-id') ?? undefined,
            body,
            request: what,
          }),
          false,
        );
      }
      return { body: body as T, status: response.status, headers: response.headers };
    }
    return this.refused(response, text, what);
  }

  /** A request that got no answer: retryable, a GET being safe to send again. */
  private unanswered(what: string, timedOut: boolean, timeoutMs: number, cause: unknown): Failure {
    if (timedOut) {
      // A slow moment may pass.
      return new Failure(
        new TimeoutError({
          message: `${what}: no response within ${timeoutMs} ms`,
          request: what,
          cause,
        }),
        true,
      );
    }
    // Refused, reset, DNS: the request never got an answer.
    return new Failure(
      new ConnectionError({
        message: `${what}: could not reach ${this.baseUrl}: ${(cause as Error)?.message ?? String(cause)}`,
        request: what,
        cause,
      }),
      true,
    );
  }

  /** An answer that is an error: the error, and whether the same request may succeed later. */
  private refused(response: Response, text: string, what: string): Failure {
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    const error = errorFromResponse(response.status, body, response.headers, what);
    // 429: the quota refreshes (Retry-After says when), so the same request will succeed.
    // 503: the database is unreachable or this instance is shutting down; both pass, and
    //      another instance may answer meanwhile. Nothing else is retried: a 4xx would
    //      fail the same way again, a 500 is a bug, and a 504 (a query that ran out of
    //      time) would most likely run out of time again while adding load.
    const retryable = response.status === 429 || response.status === 503;
    const retryAfter = retryAfterSeconds(response.headers);
    return new Failure(error, retryable, retryAfter === undefined ? undefined : retryAfter * 1000);
  }

  /** Learns the quota from the rate-limit headers of every response. */
  private observe(headers: Headers): void {
    if (!this.pacing) return;
    const policy = parsePolicy(headers.get('ratelimit-policy'));
    if (policy) this.gate.learn(policy.quota, policy.windowMs);
  }
}

function withQuery(path: string, query: Query): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) search.set(name, String(value));
  }
  return `${path}${search.toString() ? `?${search}` : ''}`;
}

class Failure {
  constructor(
    readonly error: CompplanError,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {}
}
