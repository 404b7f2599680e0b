import { z } from 'zod';
import { PART_TYPES } from '../../columns/types.js';
import { limitParam, nextCursorParam, pageOf } from '../../http/schemas.js';
import { MERIT_CYCLE_STATUSES } from '../../import/schema.js';

export const MeritCycleStatus = z.enum(MERIT_CYCLE_STATUSES);
export type MeritCycleStatus = z.infer<typeof MeritCycleStatus>;

export const MeritCycleId = z
  .string()
  .describe('`mc_` followed by a lowercase UUID.')
  .meta({ example: 'mc_1b4e28ba-2fa1-41d2-883f-0016d3cca427' });

export const MeritCycle = z
  .object({
    id: MeritCycleId,
    name: z.string(),
    startDate: z.iso.datetime().describe('ISO 8601 UTC with milliseconds.'),
    endDate: z.iso.datetime().describe('ISO 8601 UTC with milliseconds.'),
    createdDate: z.iso.datetime().describe('When the merit cycle was created.'),
    status: MeritCycleStatus,
  })
  .meta({ id: 'MeritCycle' });
export type MeritCycle = z.infer<typeof MeritCycle>;

export const MeritCyclePage = pageOf(MeritCycle, 'MeritCyclePage');

export const ExchangeRates = z
  .object({
    base: z.string().describe('ISO 4217 code of the merit cycle currency.'),
    rates: z
      .record(z.string(), z.number())
      .describe('Currency code → rate from the base currency to that currency, as loaded.'),
  })
  .meta({ id: 'ExchangeRates' });

export const MeritCycleParams = z.object({ id: MeritCycleId });

export const MeritCycleColumn = z
  .object({
    key: z.string().describe("The column key, as in each employee's `columns`."),
    name: z.string().describe('Display name of the column.'),
    type: z
      .string()
      .describe(
        '`text`, `number`, `date`, `boolean`, `currency` or `composite`; any other type carries any JSON value.',
      ),
    parts: z
      .array(
        z.object({
          key: z.string(),
          type: z
            .enum(PART_TYPES)
            .describe(
              '`currency` for a currency object; for strings `number` (every value a decimal), `date` (every value a date) or `text`.',
            ),
        }),
      )
      .nullable()
      .describe("A composite column's parts seen in the cycle, by key; null for other types."),
  })
  .meta({ id: 'MeritCycleColumn' });

export const MeritCycleColumns = z
  .object({
    data: z.array(MeritCycleColumn).describe('Ordered by key (code point).'),
    nextCursor: z.null().describe('Always null: the columns of a merit cycle are one page.'),
  })
  .meta({ id: 'MeritCycleColumns' });

const calendarDate = z.iso.date().describe('A calendar date, YYYY-MM-DD, compared in UTC.');

export const START_DATE_BOUNDS = ['gt', 'gte', 'lt', 'lte'] as const;
export type StartDateBound = (typeof START_DATE_BOUNDS)[number];
const bracket = (bound: StartDateBound) => `startDate[${bound}]` as const;

/**
 * What a merit cycle list is filtered by. Built in this key order everywhere, because a
 * cursor's filters are compared with a request's as JSON text.
 */
export const MeritCycleFilters = z.object({
  status: MeritCycleStatus.optional(),
  gt: calendarDate.optional(),
  gte: calendarDate.optional(),
  lt: calendarDate.optional(),
  lte: calendarDate.optional(),
});
export type MeritCycleFilters = z.infer<typeof MeritCycleFilters>;

export const ListMeritCyclesQuery = z
  .strictObject({
    status: MeritCycleStatus.optional().describe('Only merit cycles in this status.'),
    gt: calendarDate.optional().describe('startDate filter: starts after this date.'),
    gte: calendarDate.optional().describe('startDate filter: starts on or after this date.'),
    lt: calendarDate.optional().describe('startDate filter: starts before this date.'),
    lte: calendarDate.optional().describe('startDate filter: starts on or before this date.'),
    'startDate[gt]': calendarDate.optional().describe('Bracket form of `gt`.'),
    'startDate[gte]': calendarDate.optional().describe('Bracket form of `gte`.'),
    'startDate[lt]': calendarDate.optional().describe('Bracket form of `lt`.'),
    'startDate[lte]': calendarDate.optional().describe('Bracket form of `lte`.'),
    limit: limitParam,
    nextCursor: nextCursorParam,
  })
  .superRefine((query, ctx) => {
    for (const bound of START_DATE_BOUNDS) {
      if (query[bound] !== undefined && query[bracket(bound)] !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [bracket(bound)],
          message: `startDate ${bound} is given twice (as ${bound} and as ${bracket(bound)})`,
        });
      }
    }
  });
export type ListMeritCyclesQuery = z.infer<typeof ListMeritCyclesQuery>;

/** The filters a list request names, in canonical form; undefined when it names none. */
export function filtersOf(query: ListMeritCyclesQuery): MeritCycleFilters | undefined {
  const filters: MeritCycleFilters = {
    status: query.status,
    gt: query.gt ?? query['startDate[gt]'],
    gte: query.gte ?? query['startDate[gte]'],
    lt: query.lt ?? query['startDate[lt]'],
    lte: query.lte ?? query['startDate[lte]'],
  };
  const named = Object.values(filters).some((value) => value !== undefined);
  return named ? MeritCycleFilters.parse(filters) : undefined;
}

/** A merit cycle list position: the sort key (createdDate desc, id asc) of the last item. */
export const MeritCycleAfter = z.object({ createdDate: z.iso.datetime(), id: z.string() });
export type MeritCycleAfter = z.infer<typeof MeritCycleAfter>;
