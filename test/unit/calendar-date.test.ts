// A column's date (src/columns/types.ts, isCalendarDate): `YYYY-MM-DD` naming a day that
// exists in the Gregorian calendar as JavaScript's Date counts it back to year 1 — the
// century rules of leap years, each month's last day, the years' bounds, and text that
// only looks like a date.
import { describe, expect, it } from 'vitest';
import { isCalendarDate } from '../../src/columns/types.js';

describe('a calendar date', () => {
  it.each([
    ['2024-02-29', true],
    ['2023-02-29', false],
    ['2000-02-29', true],
    ['1900-02-29', false],
    ['0400-02-29', true],
    ['0100-02-29', false],
    ['0004-02-29', true],
    ['0001-01-01', true],
    ['0000-01-01', false],
    ['9999-12-31', true],
    ['2025-01-31', true],
    ['2025-04-31', false],
    ['2025-06-30', true],
    ['2025-11-31', false],
    ['2025-12-32', false],
    ['2025-13-01', false],
    ['2025-00-10', false],
    ['2025-01-00', false],
    ['2025-1-01', false],
    ['2025-01-01T00:00:00Z', false],
    [' 2025-01-01', false],
    ['10000-01-01', false],
  ])('%s is %s', (text, expected) => {
    expect(isCalendarDate(text)).toBe(expected);
  });
});
