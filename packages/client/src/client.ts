// The client: one method per endpoint, typed by the OpenAPI document (the types in
// generated/ are made from openapi.json by openapi-typescript, never written by hand).
import type { components, operations } from './generated/openapi.js';
import { type RequestOptions, Transport, type TransportOptions } from './transport.js';

type Schemas = components['schemas'];
export type MeritCycle = Schemas['MeritCycle'];
export type MeritCycleEmployee = Schemas['MeritCycleEmployee'];
export type ExchangeRates = Schemas['ExchangeRates'];
export type Pong = Schemas['Pong'];
export type MeritCycleStatus = MeritCycle['status'];

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

    /** The merit cycle's exchange rates: base currency and rates as loaded. */
    exchangeRates: async (id: string, options: RequestOptions = {}): Promise<ExchangeRates> =>
      (
        await this.transport.get<ExchangeRates>(
          `${MERIT_CYCLES}/${segment(id)}/exchangeRates`,
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
  };
}

/** `createClient({ baseUrl, apiKey })`: the same as `new CompplanClient(…)`. */
export function createClient(options: ClientOptions): CompplanClient {
  return new CompplanClient(options);
}
