// The demo data set: an organisation `demo` with merit cycles in every status and a few
// hundred employees in several currencies and departments, each with the compensation
// columns a BI tool charts (compensation.ts). Seeded, so that every run (and every
// developer's machine) produces the same ids, names and figures.
import { en, Faker } from '@faker-js/faker';
import type { DataSetInput } from '../import/schema.js';
import { compensationColumns, payOf } from './compensation.js';
import { DEMO_ORGANIZATION } from './organization.js';
import type { Person } from './person.js';

const SEED = 20_250_101;
// The currency of every demo cycle: compensation amounts are in it, whatever currency an
// employee is paid in (each employee's own is their currencyCode).
const CYCLE_CURRENCY = 'USD';

const DEPARTMENTS: Record<string, readonly string[]> = {
  Engineering: [
    'Software Engineer',
    'Senior Software Engineer',
    'Staff Engineer',
    'Engineering Manager',
  ],
  Sales: ['Account Executive', 'Sales Development Representative', 'Sales Manager'],
  Marketing: ['Marketing Specialist', 'Product Marketing Manager', 'Content Strategist'],
  Finance: ['Financial Analyst', 'Accountant', 'Finance Manager'],
  People: ['People Partner', 'Recruiter', 'Compensation Analyst'],
  Operations: ['Operations Analyst', 'Program Manager'],
  Support: ['Support Specialist', 'Support Team Lead'],
  Design: ['Product Designer', 'Senior Product Designer'],
};

// Where people work, and so what they are paid in; weights are rough head counts.
const CURRENCIES: readonly { code: string; weight: number }[] = [
  { code: 'USD', weight: 45 },
  { code: 'EUR', weight: 20 },
  { code: 'GBP', weight: 15 },
  { code: 'CAD', weight: 8 },
  { code: 'INR', weight: 7 },
  { code: 'JPY', weight: 5 },
];

const CYCLES = [
  {
    name: '2023 Annual Merit',
    status: 'finalized',
    start: '2023-01-09',
    end: '2023-03-31',
    created: '2022-11-14',
    people: 180,
  },
  {
    name: '2024 Mid-Year Review',
    status: 'finalized',
    start: '2024-06-03',
    end: '2024-07-31',
    created: '2024-04-22',
    people: 90,
  },
  {
    name: '2024 Annual Merit',
    status: 'finalized',
    start: '2024-01-08',
    end: '2024-03-29',
    created: '2023-11-13',
    people: 220,
  },
  {
    name: '2025 Annual Merit',
    status: 'active',
    start: '2025-01-06',
    end: '2025-03-31',
    created: '2024-11-15',
    people: 320,
  },
  {
    name: '2025 Sales Off-Cycle',
    status: 'inactive',
    start: '2025-05-01',
    end: '2025-05-30',
    created: '2025-03-20',
    people: 60,
  },
  {
    name: '2026 Annual Merit',
    status: 'inactive',
    start: '2026-01-05',
    end: '2026-03-31',
    created: '2025-10-01',
    people: 300,
  },
] as const;

function people(faker: Faker, count: number): Person[] {
  const emails = new Set<string>();
  return Array.from({ length: count }, () => {
    const firstName = faker.person.firstName();
    const lastName = faker.person.lastName();
    let email = faker.internet
      .email({ firstName, lastName, provider: 'demo.example' })
      .toLowerCase();
    while (emails.has(email)) email = `${faker.string.alphanumeric(4).toLowerCase()}.${email}`;
    emails.add(email);
    const department = faker.helpers.objectKey(DEPARTMENTS);
    return {
      firstName,
      lastName,
      preferredName: faker.datatype.boolean(0.15) ? faker.person.firstName() : null,
      email,
      currency: faker.helpers.weightedArrayElement(
        CURRENCIES.map((c) => ({ value: c.code, weight: c.weight })),
      ),
      department,
      jobTitle: faker.helpers.arrayElement(DEPARTMENTS[department] ?? ['Specialist']),
      level: faker.number.int({ min: 1, max: 7 }),
    };
  });
}

export function demoDataSet(): DataSetInput {
  const faker = new Faker({ locale: [en], seed: SEED });
  // Fixed reference date: faker's dates would otherwise move with the clock.
  faker.setDefaultRefDate('2025-01-01T00:00:00.000Z');
  const staff = people(faker, 360);
  // Pay is drawn from a faker of its own, so that the ids and names above stay as they were.
  const pay = new Faker({ locale: [en], seed: SEED + 1 });
  const payOfPerson = new Map(staff.map((person) => [person, payOf(pay, person)]));
  return {
    organization: { slug: DEMO_ORGANIZATION, name: 'Demo Company', apiKeysEnabled: true },
    meritCycles: CYCLES.map((cycle) => ({
      id: `mc_${faker.string.uuid()}`,
      name: cycle.name,
      status: cycle.status,
      startDate: `${cycle.start}T00:00:00.000Z`,
      endDate: `${cycle.end}T23:59:59.999Z`,
      createdDate: `${cycle.created}T09:30:00.000Z`,
      currency: CYCLE_CURRENCY,
      exchangeRates: {
        EUR: faker.number.float({ min: 0.88, max: 0.95, fractionDigits: 4 }),
        GBP: faker.number.float({ min: 0.76, max: 0.82, fractionDigits: 4 }),
        CAD: faker.number.float({ min: 1.3, max: 1.4, fractionDigits: 4 }),
        INR: faker.number.float({ min: 82, max: 86, fractionDigits: 2 }),
        JPY: faker.number.float({ min: 140, max: 155, fractionDigits: 2 }),
      },
      employees: faker.helpers.arrayElements(staff, cycle.people).map((person) => ({
        id: `mce_${faker.string.uuid()}`,
        email: person.email,
        firstName: person.firstName,
        lastName: person.lastName,
        preferredName: person.preferredName,
        currencyCode: person.currency,
        eligibilityStatus: faker.datatype.boolean(0.9) ? 'eligible' : 'ineligible',
        columns: compensationColumns(pay, person, payOfPerson.get(person), {
          start: cycle.start,
          currency: CYCLE_CURRENCY,
        }),
      })),
    })),
  };
}
