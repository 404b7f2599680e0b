import { z } from 'zod';
import { limitParam, nextCursorParam, pageOf } from '../../http/schemas.js';
import { MeritCycleId } from '../merit-cycles/schema.js';

export const ELIGIBILITY_STATUSES = ['eligible', 'ineligible'] as const;
export const EligibilityStatus = z.enum(ELIGIBILITY_STATUSES);

export const Column = z
  .object({
    name: z.string().describe('Display name of the column.'),
    type: z.string().describe('`text`, `composite`, or another type with any JSON value.'),
    value: z
      .unknown()
      .describe(
        'For `text` a string; for `composite` an object of named text parts (fullName, jobLevel, jobTitle, …).',
      ),
  })
  .meta({ id: 'Column' });

export const Employee = z
  .object({
    id: z
      .string()
      .describe('`mce_` followed by a lowercase UUID.')
      .meta({ example: 'mce_9a1f0c52-7d1e-4c0b-a6f3-2b8e5d4c3a10' }),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    preferredName: z.string().nullable(),
    currencyCode: z.object({
      code: z.string().optional().describe('ISO 4217 code.'),
      value: z.string().optional().describe('Readable currency name, e.g. `Euro`.'),
    }),
    eligibilityStatus: EligibilityStatus,
    columns: z
      .record(z.string(), Column)
      .describe('Column key → column, e.g. `department`, `employee`.'),
  })
  .meta({ id: 'MeritCycleEmployee' });
export type Employee = z.infer<typeof Employee>;

export const EmployeePage = pageOf(Employee, 'MeritCycleEmployeePage');

export const EmployeesParams = z.object({ meritCycleId: MeritCycleId });

export const ListEmployeesQuery = z.strictObject({
  limit: limitParam,
  nextCursor: nextCursorParam,
});

/** Employees have no filters; the cursor still carries an (empty) filter object. */
export const EmployeeFilters = z.object({});
export type EmployeeFilters = z.infer<typeof EmployeeFilters>;

/** An employee list position: the sort key (lastName, firstName, id) of the last item. */
export const EmployeeAfter = z.tuple([z.string(), z.string(), z.string()]);
export type EmployeeAfter = z.infer<typeof EmployeeAfter>;
