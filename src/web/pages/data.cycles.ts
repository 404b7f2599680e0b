// Settings → Data's new merit cycle (pages/data.ts): the form's fields read and checked in
// plain words, each problem said at its field; a valid form is the cycle the import creates.
import { isCurrencyCode } from '../../currency/iso4217.js';
import { MERIT_CYCLE_STATUSES } from '../../import/schema.js';
import type { NewCycleField, NewCycleForm } from './data.views.js';

/** As long as the import takes a name (import/schema.ts). */
const NAME_MAX_LENGTH = 200;

export interface NewCycle {
  name: string;
  status: (typeof MERIT_CYCLE_STATUSES)[number];
  startDate: string;
  endDate: string;
  currency: string;
}

const FIELDS: NewCycleField[] = ['name', 'startDate', 'endDate', 'status', 'currency'];

/** A YYYY-MM-DD date that exists (the form's date input sends this). */
function isDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/**
 * The form's cycle, or what is wrong with each field. `taken`: the names of the
 * organisation's cycles (a name the import would match, and update, instead of creating).
 */
export function newCycleOfForm(
  field: (name: string) => string,
  taken: readonly string[],
): { cycle: NewCycle } | { form: NewCycleForm } {
  const values = Object.fromEntries(FIELDS.map((name) => [name, field(name)])) as Record<
    NewCycleField,
    string
  >;
  const name = values.name.trim();
  const currency = values.currency.trim().toUpperCase();
  const errors: NewCycleForm['errors'] = {};
  if (name === '') errors.name = 'Give the merit cycle a name.';
  else if (name.length > NAME_MAX_LENGTH) {
    errors.name = `Shorten the name to at most ${NAME_MAX_LENGTH} characters.`;
  } else if (taken.includes(name)) {
    errors.name = `There is a merit cycle named “${name}” already: choose another name, or load that cycle’s employees with the upload form.`;
  }
  if (values.startDate === '') errors.startDate = 'Give the start date.';
  else if (!isDate(values.startDate)) {
    errors.startDate = 'Give the start date as a date of the calendar, such as 2026-01-01.';
  }
  if (values.endDate === '') errors.endDate = 'Give the end date.';
  else if (!isDate(values.endDate)) {
    errors.endDate = 'Give the end date as a date of the calendar, such as 2026-12-31.';
  } else if (errors.startDate === undefined && values.endDate < values.startDate) {
    errors.endDate = 'The end date is before the start date: give an end date on or after it.';
  }
  const status = MERIT_CYCLE_STATUSES.find((known) => known === values.status);
  if (!status) errors.status = 'Choose a status: Active, Inactive or Finalized.';
  if (currency === '') errors.currency = 'Give the currency, such as USD, EUR or GBP.';
  else if (!isCurrencyCode(currency)) {
    errors.currency = `“${values.currency.trim()}” is not a currency code: give the three-letter code, such as USD, EUR or GBP.`;
  }
  if (Object.keys(errors).length > 0 || !status) return { form: { values, errors } };
  return {
    cycle: { name, status, startDate: values.startDate, endDate: values.endDate, currency },
  };
}
