// The flat CSV line the import stores for each employee (src/export/flat-line.ts), where
// the API tests do not reach one by one: the line is the flat row's CSV after its two ids;
// its key is the layout's, whatever the properties are named; an employee of other columns
// or another currency has another key; no line past the room of a SQLite row or with the
// download's separator in it; a line's list position read back through CSV quoting.
import { describe, expect, it } from 'vitest';
import type { FlattenableEmployee } from '../../src/export/csv.js';
import { FlatLineWriter, flatLineKey, listPositionOfLine } from '../../src/export/flat-line.js';
import { flatLayout, flatRowWriter } from '../../src/export/flat-row.js';

const CYCLE = {
  meritCycleId: 'mc_70000000-0000-4000-8000-000000000001',
  currency: 'EUR',
  columns: [
    { key: 'bonus_pct', name: 'Bonus', type: 'number', parts: null },
    { key: 'hired', name: 'Hired', type: 'date', parts: null },
    { key: 'pay', name: 'Pay', type: 'currency', parts: null },
    {
      key: 'role',
      name: 'Role',
      type: 'composite',
      parts: [
        { key: 'level', type: 'text' as const },
        { key: 'target', type: 'currency' as const },
      ],
    },
    { key: 'manager', name: 'Manager', type: 'boolean', parts: null },
  ],
};
// Another cycle with `bonus-pct`: this cycle's bonus_pct is then named bonus_pct_2.
const OTHER = {
  meritCycleId: 'mc_70000000-0000-4000-8000-000000000002',
  currency: 'EUR',
  columns: [{ key: 'bonus-pct', name: 'Bonus', type: 'number', parts: null }],
};

const employee = (overrides: Partial<FlattenableEmployee> = {}): FlattenableEmployee => ({
  id: 'mce_70000000-0000-4000-8000-000000000001',
  email: 'a@example.com',
  firstName: 'Ann, "A"',
  lastName: 'Line\r\nBreak',
  preferredName: null,
  currencyCode: { code: 'EUR', value: 'Euro' },
  eligibilityStatus: 'eligible',
  columns: {
    bonus_pct: { name: 'Bonus', type: 'number', value: '0.10' },
    hired: { name: 'Hired', type: 'date', value: '2020-02-29' },
    manager: { name: 'Manager', type: 'boolean', value: false },
    pay: { name: 'Pay', type: 'currency', value: { EUR: '-00120000.50' } },
    role: { name: 'Role', type: 'composite', value: { level: 'L5', target: { EUR: '1.25' } } },
  },
  ...overrides,
});

const { id: _id, ...imported } = employee();

describe('an employee’s stored flat line', () => {
  it('is the flat row’s CSV line after the two ids, keyed by the cycle’s layout whatever its names', () => {
    const line = new FlatLineWriter().lineOf(imported, 'EUR', 1_000);
    const layout = flatLayout(CYCLE, [CYCLE, OTHER]);
    expect(layout.properties.some((property) => property.name === 'bonus_pct_2')).toBe(true);
    const row = flatRowWriter(layout, 'csv')(employee());
    expect(`mce_70000000-0000-4000-8000-000000000001,${CYCLE.meritCycleId},${line?.tail}`).toBe(
      row,
    );
    expect(row).toBe(
      `mce_70000000-0000-4000-8000-000000000001,${CYCLE.meritCycleId},a@example.com,"Ann, ""A""","Line\r\nBreak",,EUR,Euro,eligible,0.10,2020-02-29,false,EUR,-00120000.50,L5,1.25\r\n`,
    );
    expect(line?.key).toBe(flatLineKey(layout));
    expect(line?.key).toBe(flatLineKey(flatLayout(CYCLE, [CYCLE])));
  });

  it('has another key for other columns, another part type or another currency; the same for other values', () => {
    const writer = new FlatLineWriter();
    const key = (of: Partial<FlattenableEmployee>, currency = 'EUR') =>
      writer.lineOf({ ...imported, ...of }, currency, 1_000)?.key;
    const base = key({});
    const { bonus_pct: _bonus, ...withoutBonus } = imported.columns;
    expect(key({ firstName: 'Other', email: 'b@example.com' })).toBe(base);
    expect(key({ columns: withoutBonus })).not.toBe(base);
    expect(
      key({
        columns: {
          ...imported.columns,
          role: { name: 'Role', type: 'composite', value: { level: '5', target: { EUR: '1' } } },
        },
      }),
    ).not.toBe(base);
    expect(key({}, 'USD')).not.toBe(base);
  });

  it('is kept only while the text and the line fit the room of a SQLite row, and never holds U+001E', () => {
    const writer = new FlatLineWriter();
    const tail = writer.lineOf(imported, 'EUR', 0)?.tail ?? '';
    const room = 3_600 - Buffer.byteLength(tail);
    expect(writer.lineOf(imported, 'EUR', room)).not.toBeNull();
    expect(writer.lineOf(imported, 'EUR', room + 1)).toBeNull();
    expect(writer.lineOf({ ...imported, firstName: 'Rec\u001eord' }, 'EUR', 0)).toBeNull();
  });

  it('reads back its list position through CSV quoting', () => {
    const line = flatRowWriter(flatLayout(CYCLE, [CYCLE]), 'csv')(employee());
    expect(listPositionOfLine(line)).toEqual([
      'Line\r\nBreak',
      'Ann, "A"',
      'mce_70000000-0000-4000-8000-000000000001',
    ]);
    expect(() => listPositionOfLine('mce_1,mc_1\r\n')).toThrow(/first five fields/);
  });
});
