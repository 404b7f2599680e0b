// The flat row of a bulk download (src/export/flat-row.ts) where the API tests do not
// reach: a column whose own property name is `currency` keeps it (the cycle's currency
// column gives way, `currency_2`), and a stored decimal with leading zeros is a valid JSON
// number in the flat NDJSON, the same digits otherwise, while CSV keeps it as stored.
import { describe, expect, it } from 'vitest';
import { flatLayout, flatRowWriter } from '../../src/export/flat-row.js';
import type { Employee } from '../../src/modules/employees/schema.js';

const CYCLE = {
  meritCycleId: 'mc_70000000-0000-4000-8000-000000000001',
  currency: 'EUR',
  columns: [
    { key: 'currency', name: 'Currency', type: 'text', parts: null },
    { key: 'pay', name: 'Pay', type: 'currency', parts: null },
  ],
};

const employee = {
  id: 'mce_70000000-0000-4000-8000-000000000001',
  email: 'a@example.com',
  firstName: 'A',
  lastName: 'B',
  preferredName: null,
  currencyCode: { code: 'EUR', value: 'Euro' },
  eligibilityStatus: 'eligible',
  columns: {
    currency: { name: 'Currency', type: 'text', value: 'local' },
    pay: { name: 'Pay', type: 'currency', value: { EUR: '-00120000.50' } },
  },
} as unknown as Employee;

describe('the flat row', () => {
  it('names the cycle’s currency column currency_2 when a column’s property is currency, before the first amount', () => {
    const layout = flatLayout(CYCLE, [CYCLE]);
    expect(layout.properties.map((property) => property.name).slice(9)).toEqual([
      'currency',
      'currency_2',
      'pay',
    ]);
    expect(flatRowWriter(layout, 'csv')(employee)).toBe(
      `${employee.id},${CYCLE.meritCycleId},a@example.com,A,B,,EUR,Euro,eligible,local,EUR,-00120000.50\r\n`,
    );
  });

  it('writes a decimal with leading zeros as a valid JSON number of the same digits', () => {
    const line = flatRowWriter(flatLayout(CYCLE, [CYCLE]), 'ndjson')(employee);
    expect(line.endsWith('"currency":"local","currency_2":"EUR","pay":-120000.50}\n')).toBe(true);
    expect(JSON.parse(line)).toMatchObject({ pay: -120000.5 });
  });
});
