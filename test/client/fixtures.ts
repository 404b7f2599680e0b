// Data sets for the SDK, export and CSV import tests: fixed ids, a few cycles in every
// status, and a cycle of N employees whose values include what CSV must quote (commas,
// quotes, line breaks, leading spaces, non-Latin text).
import type { DataSetInput } from '../../src/import/schema.js';

export const SDK_ORG = 'sdk';

export const SDK_CYCLE = {
  big: 'mc_50000000-0000-4000-8000-000000000001',
  finalized: 'mc_50000000-0000-4000-8000-000000000002',
  inactive: 'mc_50000000-0000-4000-8000-000000000003',
  empty: 'mc_50000000-0000-4000-8000-000000000004',
  older: 'mc_50000000-0000-4000-8000-000000000005',
} as const;

export type EmployeeInput = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];

const LAST_NAMES = ['Lovelace', 'Hopper', "O'Brien", 'Müller', 'Nguyen', 'Smith, Jr.', '山田'];
const FIRST_NAMES = ['Ada', 'Grace', 'Seán', 'Zoë', 'Linh', 'Alex "Lex"', '太郎'];
const DEPARTMENTS = ['Engineering', 'Sales, EMEA', 'R&D\nLab 2', ' Finance', 'Ops'];
const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY'];

export const employeeId = (index: number) =>
  `mce_50000000-0000-4000-8000-${String(index + 1).padStart(12, '0')}`;

export function sdkEmployee(index: number): EmployeeInput {
  const lastName = LAST_NAMES[index % LAST_NAMES.length] ?? 'Smith';
  const firstName = FIRST_NAMES[(index * 3) % FIRST_NAMES.length] ?? 'Ada';
  return {
    id: employeeId(index),
    email: `person${index}@sdk.example`,
    firstName,
    lastName,
    preferredName: index % 4 === 0 ? `Pref ${index}` : null,
    currencyCode: CURRENCIES[index % CURRENCIES.length] ?? 'USD',
    eligibilityStatus: index % 5 === 0 ? 'ineligible' : 'eligible',
    columns: {
      department: {
        name: 'Department',
        type: 'text',
        value: DEPARTMENTS[index % DEPARTMENTS.length] ?? 'Ops',
      },
      employee: {
        name: 'Employee',
        type: 'composite',
        value: {
          fullName: `${firstName} ${lastName}`,
          jobLevel: `L${(index % 7) + 1}`,
          jobTitle: index % 2 === 0 ? 'Engineer' : 'Manager, "People"',
        },
      },
    },
  };
}

export function sdkDataSet(employees: number): DataSetInput {
  const cycle = (
    id: string,
    name: string,
    status: 'active' | 'inactive' | 'finalized',
    startDate: string,
    createdDate: string,
  ) => ({
    id,
    name,
    status,
    startDate,
    endDate: '2026-12-31T23:59:59.999Z',
    createdDate,
    currency: 'USD',
  });
  return {
    organization: { slug: SDK_ORG, name: 'SDK Corp', apiKeysEnabled: true },
    meritCycles: [
      {
        ...cycle(
          SDK_CYCLE.big,
          '2025 Annual Merit',
          'active',
          '2025-01-01T00:00:00.000Z',
          '2024-11-05T00:00:00.000Z',
        ),
        exchangeRates: { EUR: 0.92, GBP: 0.79, JPY: 151.3 },
        employees: Array.from({ length: employees }, (_, index) => sdkEmployee(index)),
      },
      cycle(
        SDK_CYCLE.finalized,
        '2024 Annual Merit',
        'finalized',
        '2024-01-01T00:00:00.000Z',
        '2024-11-04T00:00:00.000Z',
      ),
      cycle(
        SDK_CYCLE.inactive,
        '2025 Mid-year',
        'inactive',
        '2025-07-01T00:00:00.000Z',
        '2024-11-03T00:00:00.000Z',
      ),
      cycle(
        SDK_CYCLE.empty,
        '2026 Planning',
        'inactive',
        '2026-01-01T00:00:00.000Z',
        '2024-11-02T00:00:00.000Z',
      ),
      cycle(
        SDK_CYCLE.older,
        '2023 Annual Merit',
        'finalized',
        '2023-01-01T00:00:00.000Z',
        '2024-11-01T00:00:00.000Z',
      ),
    ],
  };
}

/** The cycle ids in the API's order: newest createdDate first. */
export const CYCLES_IN_ORDER = [
  SDK_CYCLE.big,
  SDK_CYCLE.finalized,
  SDK_CYCLE.inactive,
  SDK_CYCLE.empty,
  SDK_CYCLE.older,
];

/** Compares by Unicode code point, as the API orders employees. */
function byCodePoint(a: string, b: string): number {
  const left = Array.from(a, (char) => char.codePointAt(0) ?? 0);
  const right = Array.from(b, (char) => char.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/** The ids of the first `count` fixture employees in the API's order. */
export function employeeIdsInOrder(count: number): string[] {
  return Array.from({ length: count }, (_, index) => sdkEmployee(index))
    .sort(
      (a, b) =>
        byCodePoint(a.lastName, b.lastName) ||
        byCodePoint(a.firstName, b.firstName) ||
        byCodePoint(a.id ?? '', b.id ?? ''),
    )
    .map((employee) => employee.id ?? '');
}
