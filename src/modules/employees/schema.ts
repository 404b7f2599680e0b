import { z } from 'zod';
import { COLUMN_TYPES } from '../../columns/types.js';
import { limitParam, nextCursorParam, pageOf } from '../../http/schemas.js';
import { ELIGIBILITY_STATUSES } from '../../import/schema.js';
import { MeritCycleId } from '../merit-cycles/schema.js';

export const EligibilityStatus = z.enum(ELIGIBILITY_STATUSES);

// A column as the employee carries it: one of the six types, whose values are checked by
// the import (src/columns/types.ts), or any other type with any JSON value. Described as
// oneOf (z.xor) so that a reader of the document knows each type's value.
const decimal = z.string().regex(/^-?\d+(?:\.\d+)?$/);
const currencyAmount = z
  .record(z.string().regex(/^[A-Z]{3}$/), decimal)
  .meta({ minProperties: 1, maxProperties: 1 })
  .describe(
    'One key, the merit cycle\'s currency code, whose value is a decimal string: `{ "USD": "120000.00" }`.',
  );
const typedColumn = (type: string, value: z.ZodType, description: string) =>
  z.object({
    name: z.string().describe('Display name of the column.'),
    type: z.literal(type),
    value: value.nullable().describe(`${description} null when empty.`),
  });

export const Column = z
  .xor([
    typedColumn('text', z.string(), 'A string.'),
    typedColumn('number', decimal, 'A decimal written as a string, e.g. `"0.97"`.'),
    typedColumn('date', z.iso.date(), 'A calendar date, YYYY-MM-DD.'),
    typedColumn('boolean', z.boolean(), '`true` or `false`.'),
    typedColumn('currency', currencyAmount, "An amount in the merit cycle's currency."),
    typedColumn(
      'composite',
      z.record(z.string(), z.union([z.string(), currencyAmount])),
      'Named parts (e.g. fullName, jobLevel, jobTitle), each a string (text, a decimal or a date) or a currency object.',
    ),
    z.object({
      name: z.string().describe('Display name of the column.'),
      type: z
        .string()
        .meta({ not: { enum: [...COLUMN_TYPES] } })
        .describe('Any other type: its value is any JSON value, served as loaded.'),
      value: z.unknown(),
    }),
  ])
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
