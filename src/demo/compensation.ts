// The demo's compensation columns, with the vendor's default keys (docs/import-format.md,
// "Column types"): pay bands by job level and country, base pay within them, the
// compa-ratio and range penetration those give, a bonus by level — every amount in the
// merit cycle's currency, whatever currency the employee is paid in — plus the department,
// country and employee columns, a custom date and a custom boolean, and some nulls.
import type { Faker } from '@faker-js/faker';
import type { Person } from './person.js';

// Target base pay of a band, by job level, in the United States (the cycles' currency).
const LEVEL_TARGET = [0, 68_000, 84_000, 104_000, 128_000, 156_000, 190_000, 235_000];
// Where people paid in each currency work, and the local market against the US one.
const COUNTRIES: Record<string, readonly { country: string; market: number }[]> = {
  USD: [{ country: 'United States', market: 1 }],
  EUR: [
    { country: 'Germany', market: 0.8 },
    { country: 'France', market: 0.76 },
    { country: 'Netherlands', market: 0.82 },
    { country: 'Spain', market: 0.64 },
  ],
  GBP: [{ country: 'United Kingdom', market: 0.84 }],
  CAD: [{ country: 'Canada', market: 0.8 }],
  INR: [{ country: 'India', market: 0.32 }],
  JPY: [{ country: 'Japan', market: 0.68 }],
};
// Bands run from 80 % to 120 % of their target (a 50 % range spread).
const BAND_MIN = 0.8;
const BAND_MAX = 1.2;
// Target bonus by job level, as a share of base pay.
const BONUS_SHARE = [0, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2];
// Pay moves with the market from year to year.
const YEARLY_RAISE = 1.035;

/** What stays with a person from cycle to cycle. */
export interface PersonPay {
  country: string;
  market: number;
  /** Where in the band the person sits (base pay / band target), before a cycle's drift. */
  compaRatio: number;
  /** The last promotion; null for one who was never promoted. */
  promoted: Date | null;
  /** Paid by commission instead of a bonus: no bonus amount. */
  commission: boolean;
}

export function payOf(pay: Faker, person: Person): PersonPay {
  const market = pay.helpers.arrayElement(COUNTRIES[person.currency] ?? []) ?? {
    country: 'United States',
    market: 1,
  };
  return {
    ...market,
    compaRatio: pay.number.float({ min: 0.84, max: 1.16 }),
    promoted: pay.datatype.boolean(0.7)
      ? pay.date.between({ from: '2020-01-01T00:00:00Z', to: '2025-12-31T00:00:00Z' })
      : null,
    commission: person.department === 'Sales' && pay.datatype.boolean(0.5),
  };
}

const amount = (currency: string, value: number) => ({ [currency]: value.toFixed(2) });
const ratio = (value: number) => value.toFixed(4);
const date = (value: Date) => value.toISOString().slice(0, 10);

/** A person's columns in a merit cycle that starts on `start` (YYYY-MM-DD), in `currency`. */
export function compensationColumns(
  pay: Faker,
  person: Person,
  personPay: PersonPay | undefined,
  cycle: { start: string; currency: string },
) {
  const year = Number(cycle.start.slice(0, 4));
  const { country, market, compaRatio, promoted, commission } = personPay ?? payOf(pay, person);
  // Bands to the nearest 500 (target) and 100 (ends), as pay tables write them.
  const target =
    Math.round(
      ((LEVEL_TARGET[person.level] ?? 100_000) * market * YEARLY_RAISE ** (year - 2023)) / 500,
    ) * 500;
  const min = Math.round((target * BAND_MIN) / 100) * 100;
  const max = Math.round((target * BAND_MAX) / 100) * 100;
  // Base pay to the nearest hundred, where the person sits this cycle.
  const drift = pay.number.float({ min: -0.03, max: 0.03 });
  const base = Math.round((target * (compaRatio + drift)) / 100) * 100;
  const bonus = commission ? null : base * (BONUS_SHARE[person.level] ?? 0.05);
  // A promotion after the cycle started is not known to it yet.
  const lastPromotion = promoted && date(promoted) < cycle.start ? date(promoted) : null;
  return {
    basePay: { name: 'Base Pay', type: 'currency', value: amount(cycle.currency, base) },
    compBandMinBasePay: {
      name: 'Comp Band Min Base Pay',
      type: 'currency',
      value: amount(cycle.currency, min),
    },
    compBandTargetBasePay: {
      name: 'Comp Band Target Base Pay',
      type: 'currency',
      value: amount(cycle.currency, target),
    },
    compBandMaxBasePay: {
      name: 'Comp Band Max Base Pay',
      type: 'currency',
      value: amount(cycle.currency, max),
    },
    currentCompaRatio: { name: 'Current Compa Ratio', type: 'number', value: ratio(base / target) },
    currentRangePenetration: {
      name: 'Current Range Penetration',
      type: 'number',
      value: ratio((base - min) / (max - min)),
    },
    annualBonusCash: {
      name: 'Annual Bonus Cash',
      type: 'currency',
      value: bonus === null ? null : amount(cycle.currency, bonus),
    },
    country: { name: 'Country', type: 'text', value: country },
    department: { name: 'Department', type: 'text', value: person.department },
    employee: {
      name: 'Employee',
      type: 'composite',
      value: {
        fullName: `${person.firstName} ${person.lastName}`,
        jobLevel: `L${person.level}`,
        jobTitle: person.jobTitle,
      },
    },
    lastPromotionDate: { name: 'Last Promotion Date', type: 'date', value: lastPromotion },
    isPeopleManager: {
      name: 'People Manager',
      type: 'boolean',
      value: /Manager|Lead/.test(person.jobTitle),
    },
  };
}
