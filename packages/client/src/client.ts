// The client: one method per endpoint, typed by the OpenAPI document (the types in
// generated/ are made from openapi.json by openapi-typescript, never written by hand).
import type { components, operations } from './generated/openapi.js';
import { type RequestOptions, Transport, type TransportOptions } from './transport.js';

type Schemas = components['schemas'];
export type MeritCycle = Schemas['MeritCycle'];
export type MeritCycleEmployee = Schemas['MeritCycleEmployee'];
export type ExchangeRates = Schemas['ExchangeRates'];
export type MeritCycleColumn = Schemas['MeritCycleColumn'];
export type MeritCycleColumns = Schemas['MeritCycleColumns'];
export type Pong = Schemas['Pong'];
export type MeritCycleStatus = MeritCycle['status'];
/** In a delta: an item removed since the deltaToken. */
export type Removed = Schemas['RemovedItem'];

/** Whether a delta item is a removal (else it is the item, in full). */
export function isRemoved<T extends object>(item: T | Removed): item is Removed {
  return (item as Partial<Removed>).removed === true;
}

export interface Page<T> {
  data: T[];
  /** Pass to `list({ nextCursor })` or `.page({ nextCursor })` for the next page; null on the last. */
  nextCursor: string | null;
}

export type ClientOptions = TransportOptions;

export interface ListOptions {
  /** Page size: items per request, 1–100 (the server's default is 25). */
  limit?: number;
  /** At most this many items in all, however many pages that takes. Default: all. */
  max?: number;
  /** Start from this cursor (a nextCursor of an earlier page), e.g. to resume. */
  nextCursor?: string;
  signal?: AbortSignal;
}

type ListMeritCyclesQuery = NonNullable<operations['listMeritCycles']['parameters']['query']>;

export interface MeritCycleFilters extends ListOptions {
  status?: MeritCycleStatus;
  /** Bounds on the UTC calendar date (YYYY-MM-DD) a cycle starts on; combined with AND. */
  startDate?: { gt?: string; gte?: string; lt?: string; lte?: string };
}

type FetchPage<T> = (
  cursor: string | undefined,
  limit: number | undefined,
  signal: AbortSignal | undefined,
) => Promise<Page<T>>;

/**
 * A list: iterate it (`for await (const item of list)`) to follow nextCursor page after
 * page until the last page or `max` items; or ask for one page with `.page()`.
 */
export class List<T> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: FetchPage<T>,
    private readonly options: ListOptions,
  ) {
    const { limit, max } = options;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
      throw new RangeError(
        `limit (the page size) must be a whole number from 1 to 100, got ${limit}`,
      );
    }
    if (max !== undefined && !(Number.isInteger(max) && max >= 0)) {
      throw new RangeError(`max must be a whole number of 0 or more, got ${max}`);
    }
  }

  /** One page: the first (or the one at the list's nextCursor), or the one at `nextCursor`. */
  page(options: { nextCursor?: string; signal?: AbortSignal } = {}): Promise<Page<T>> {
    return this.fetchPage(
      options.nextCursor ?? this.options.nextCursor,
      this.options.limit,
      options.signal ?? this.options.signal,
    );
  }

  /** The pages in order, the last one cut short where `max` is reached. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    const { max, limit, signal } = this.options;
    let remaining = max ?? Number.POSITIVE_INFINITY;
    let cursor = this.options.nextCursor;
    while (remaining > 0) {
      // Near the cap, ask only for what is still wanted.
      const size = Number.isFinite(remaining) ? Math.min(limit ?? 25, remaining) : limit;
      const page = await this.fetchPage(cursor, size, signal);
      const data = page.data.slice(0, remaining);
      remaining -= data.length;
      yield { data, nextCursor: page.nextCursor };
      if (page.nextCursor === null || page.data.length === 0) return;
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item (up to `max`) in one array. Mind the memory for long lists. */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}

export interface DeltaPage<T> {
  data: (T | Removed)[];
  /** The next page of this walk; null on the last. */
  nextCursor: string | null;
  /** On the last page only: keep it for the next delta. */
  deltaToken: string | null;
}

export interface DeltaOptions {
  /** The deltaToken of the previous walk; absent: every current item (a full sync). */
  deltaToken?: string;
  /** Page size, 1–100 (the server's default is 25). */
  limit?: number;
  signal?: AbortSignal;
}

type FetchDeltaPage<T> = (
  query: { deltaToken?: string; nextCursor?: string; limit?: number },
  signal: AbortSignal | undefined,
) => Promise<DeltaPage<T>>;

/**
 * A delta (docs/delta-sync.md): iterate it for every change since the deltaToken — items
 * created or changed, in full, and removals (`isRemoved`) — in the order to apply them.
 * Once the iteration has ended, `deltaToken` is the token to keep for the next delta;
 * store it only after every change is applied.
 */
export class Delta<T> implements AsyncIterable<T | Removed> {
  /** Set when the last page has been read. */
  deltaToken: string | undefined;

  constructor(
    private readonly fetchPage: FetchDeltaPage<T>,
    private readonly options: DeltaOptions,
  ) {
    const { limit } = options;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
      throw new RangeError(
        `limit (the page size) must be a whole number from 1 to 100, got ${limit}`,
      );
    }
  }

  /** The pages of the walk in order; the last one carries the deltaToken. */
  async *pages(): AsyncGenerator<DeltaPage<T>, void, undefined> {
    const { limit, signal, deltaToken } = this.options;
    let query: { deltaToken?: string; nextCursor?: string; limit?: number } = {
      deltaToken,
      limit,
    };
    for (;;) {
      const page = await this.fetchPage(query, signal);
      if (page.nextCursor === null) this.deltaToken = page.deltaToken ?? undefined;
      yield page;
      if (page.nextCursor === null) return;
      query = { nextCursor: page.nextCursor, limit };
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T | Removed, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }
}

export type BulkFormat = 'ndjson' | 'csv';

/**
 * `nested`: each employee as the list serves it (NDJSON's default; as CSV, the export's
 * layout); `flat` (CSV's default): one flat row of typed values an employee, named as the
 * OData feed names its properties.
 */
export type BulkShape = 'nested' | 'flat';

/** A line of `format: 'ndjson', shape: 'flat'`: an employee as one flat object. */
export type FlatMeritCycleEmployee = Record<string, string | number | boolean | null>;

export interface BulkOptions {
  /** `ndjson` (default): one employee a line; `csv`: a header row, then one employee a row. */
  format?: BulkFormat;
  /** The rows' shape (BulkShape); by default `nested` for NDJSON, `flat` for CSV. */
  shape?: BulkShape;
  /** CSV: false leaves out the UTF-8 byte order mark (default true). */
  bom?: boolean;
  signal?: AbortSignal;
}

type OpenBulk = (options: BulkOptions) => Promise<Response>;

/**
 * Every employee of a merit cycle in one response, from one snapshot of it
 * (docs/bulk-download.md). Iterate it (`for await (const employee of download)`, NDJSON
 * only) for the employees as objects, or take `stream()`, the bytes as they arrive (a
 * web ReadableStream: `Readable.fromWeb` makes a Node stream of it). One download per key
 * at a time: a second one meanwhile waits and retries (429 with Retry-After).
 */
export class BulkDownload<T> implements AsyncIterable<T> {
  /** The ETag of the snapshot, once the download has started. */
  etag: string | undefined;

  constructor(
    private readonly openBulk: OpenBulk,
    private readonly options: BulkOptions,
  ) {}

  /** Starts the download: its body, read or cancel it (cancelling ends the download). */
  async stream(): Promise<ReadableStream<Uint8Array>> {
    const response = await this.openBulk(this.options);
    this.etag = response.headers.get('etag') ?? undefined;
    return response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  }

  /** The employees as objects, one per NDJSON line; leaving the loop ends the download. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    if ((this.options.format ?? 'ndjson') !== 'ndjson') {
      throw new TypeError('only an NDJSON bulk download iterates as objects; use stream() for CSV');
    }
    const reader = (await this.stream()).getReader();
    const decoder = new TextDecoder();
    let rest = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const lines = (rest + decoder.decode(value, { stream: true })).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) yield JSON.parse(line) as T;
      }
      rest += decoder.decode();
      if (rest !== '') yield JSON.parse(rest) as T;
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }
}

const MERIT_CYCLES = '/v1/compensationPlanning/meritCycles';
const segment = (id: string) => encodeURIComponent(id);

export class CompplanClient {
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
  }

  /** Checks connectivity and the key: resolves `{ message: 'pong' }`. */
  async ping(options: RequestOptions = {}): Promise<Pong> {
    return (await this.transport.get<Pong>('/ping', {}, options)).body;
  }

  readonly meritCycles = {
    /** Merit cycles, newest first; filters by status and start date. */
    list: (filters: MeritCycleFilters = {}): List<MeritCycle> => {
      const { status, startDate = {} } = filters;
      const query: ListMeritCyclesQuery = { status, ...startDate };
      return new List<MeritCycle>(
        async (cursor, limit, signal) =>
          (
            await this.transport.get<Page<MeritCycle>>(
              MERIT_CYCLES,
              // A cursor carries the filters of the query that made it.
              cursor === undefined ? { ...query, limit } : { nextCursor: cursor, limit },
              { signal },
            )
          ).body,
        filters,
      );
    },

    /** One merit cycle; NotFoundError when this key cannot see it. */
    get: async (id: string, options: RequestOptions = {}): Promise<MeritCycle> =>
      (await this.transport.get<MeritCycle>(`${MERIT_CYCLES}/${segment(id)}`, {}, options)).body,

    /**
     * What changed in the merit cycles since `deltaToken` (every cycle without one). A
     * change of a cycle's exchange rates is a change of the cycle.
     */
    delta: (options: DeltaOptions = {}): Delta<MeritCycle> =>
      new Delta<MeritCycle>(
        async (query, signal) =>
          (
            await this.transport.get<DeltaPage<MeritCycle>>(`${MERIT_CYCLES}/delta`, query, {
              signal,
            })
          ).body,
        options,
      ),

    /** The merit cycle's exchange rates: base currency and rates as loaded. */
    exchangeRates: async (id: string, options: RequestOptions = {}): Promise<ExchangeRates> =>
      (
        await this.transport.get<ExchangeRates>(
          `${MERIT_CYCLES}/${segment(id)}/exchangeRates`,
          {},
          options,
        )
      ).body,

    /**
     * The merit cycle's column schema: each column key with its name and type (and a
     * composite's parts), ordered by key; without the columns this key hides.
     */
    columns: async (id: string, options: RequestOptions = {}): Promise<MeritCycleColumns> =>
      (
        await this.transport.get<MeritCycleColumns>(
          `${MERIT_CYCLES}/${segment(id)}/columns`,
          {},
          options,
        )
      ).body,
  };

  readonly employees = {
    /** The employees of a merit cycle, by last name, first name and id. */
    list: (meritCycleId: string, options: ListOptions = {}): List<MeritCycleEmployee> =>
      new List<MeritCycleEmployee>(
        async (cursor, limit, signal) =>
          (
            await this.transport.get<Page<MeritCycleEmployee>>(
              `${MERIT_CYCLES}/${segment(meritCycleId)}/employees`,
              { nextCursor: cursor, limit },
              { signal },
            )
          ).body,
        options,
      ),

    /**
     * Every employee of a merit cycle in one response (NDJSON objects or CSV bytes): the
     * fastest way to read a whole cycle. Nothing is sent until it is iterated or
     * `stream()` is called. NotFoundError for a cycle this key cannot see.
     */
    bulk: <Options extends BulkOptions>(
      meritCycleId: string,
      options: Options = {} as Options,
    ): BulkDownload<
      Options['shape'] extends 'flat' ? FlatMeritCycleEmployee : MeritCycleEmployee
    > =>
      new BulkDownload(
        ({ format, shape, bom, signal }) =>
          this.transport.open(
            `${MERIT_CYCLES}/${segment(meritCycleId)}/employees/bulk`,
            { format, shape, bom: bom === undefined ? undefined : String(bom) },
            { signal },
          ),
        options,
      ),

    /**
     * What changed in the employees of a merit cycle since `deltaToken` (every employee
     * without one). NotFoundError once the cycle is removed: its removal, in the merit
     * cycles delta, stands for all of its employees.
     */
    delta: (meritCycleId: string, options: DeltaOptions = {}): Delta<MeritCycleEmployee> =>
      new Delta<MeritCycleEmployee>(
        async (query, signal) =>
          (
            await this.transport.get<DeltaPage<MeritCycleEmployee>>(
              `${MERIT_CYCLES}/${segment(meritCycleId)}/employees/delta`,
              query,
              { signal },
            )
          ).body,
        options,
      ),
  };
}

/** `createClient({ baseUrl, apiKey })`: the same as `new CompplanClient(…)`. */
export function createClient(options: ClientOptions): CompplanClient {
  return new CompplanClient(options);
}
