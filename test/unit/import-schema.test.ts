// The plain check of employee columns (src/import/schema.ts, isPlainColumns): a shortcut
// taken before zod's ColumnsShape. It must accept nothing ColumnsShape refuses, and it
// must accept the columns of ordinary files (else it saves nothing).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ColumnsShape, Employee, isPlainColumns } from '../../src/import/schema.js';

const text = { name: 'Department', type: 'text', value: 'Sales, Île-de-France' };
const composite = {
  name: 'Employee',
  type: 'composite',
  value: { fullName: 'Ada Lovelace', jobLevel: 'L5', jobTitle: 'Staff Engineer' },
};

// Valid columns, then most of them changed in one place (a field set to another value,
// removed or added; a composite part set to another value), under keys that include
// the empty one: inputs a check could accept by mistake.
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    undefined,
    null,
    0,
    Number.POSITIVE_INFINITY,
    Symbol('s'),
    new Date(0),
    [],
    '',
    ' ',
  ),
);
const validColumn = fc.oneof(
  fc.record({ name: fc.string(), type: fc.constant('text'), value: fc.string() }),
  fc.record({
    name: fc.string(),
    type: fc.constant('composite'),
    value: fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 3 }),
  }),
  fc.record({ name: fc.string(), type: fc.string({ minLength: 1 }), value: fc.jsonValue() }),
);
const field = fc.constantFrom('name', 'type', 'value', 'extra');
const change = fc.oneof(
  fc.record({ set: field, to: anyValue }),
  fc.record({ remove: field }),
  fc.record({ part: fc.string({ maxLength: 3 }), to: anyValue }),
);
const column = fc.tuple(validColumn, fc.option(change, { freq: 4 })).map(([valid, how]) => {
  const changed: Record<string, unknown> = { ...valid };
  if (how === null) return changed;
  if ('set' in how) changed[how.set] = how.to;
  else if ('remove' in how) delete changed[how.remove];
  else if (typeof changed.value === 'object' && changed.value !== null) {
    changed.value = { ...changed.value, [how.part]: how.to };
  }
  return changed;
});
const columns = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.dictionary(fc.constantFrom('department', 'employee', '', '__proto__'), column, {
      maxKeys: 3,
    }),
  },
  { weight: 1, arbitrary: anyValue },
);

describe('isPlainColumns', () => {
  it('accepts only columns that ColumnsShape accepts', () => {
    let accepted = 0;
    fc.assert(
      fc.property(columns, (value) => {
        if (!isPlainColumns(value)) return;
        accepted++;
        expect(ColumnsShape.safeParse(value).success).toBe(true);
      }),
      { numRuns: 5000 },
    );
    // The property above says nothing if the check never accepts.
    expect(accepted).toBeGreaterThan(50);
  });

  it('accepts text, composite and other columns of a parsed file', () => {
    const parsed = JSON.parse(
      JSON.stringify({
        department: text,
        employee: composite,
        score: { name: 'Score', type: 'x', value: [1, { a: null }] },
      }),
    );
    expect(isPlainColumns(parsed)).toBe(true);
    expect(isPlainColumns({})).toBe(true);
  });

  it.each([
    ['a text value that is not a string', { department: { ...text, value: 42 } }],
    [
      'a composite part that is not a string',
      { employee: { ...composite, value: { jobLevel: 5 } } },
    ],
    ['a field more', { department: { ...text, width: 3 } }],
    ['a field less', { department: { name: 'Department', type: 'text' } }],
    ['an empty key', { '': text }],
    ['a blank type', { department: { ...text, type: ' ' } }],
    [
      'a number too large',
      { score: { name: 'Score', type: 'x', value: Number.POSITIVE_INFINITY } },
    ],
    ['a symbol key', { [Symbol('s')]: text }],
    ['an array', [text]],
    ['a class instance', { department: Object.assign(Object.create({ name: 'x' }), text) }],
    [
      'a field hidden from enumeration beside one more',
      {
        department: Object.defineProperty({ type: 'text', value: 'x', width: 3 }, 'name', {
          value: 'Department',
          enumerable: false,
        }),
      },
    ],
  ])('leaves %s to ColumnsShape', (_, value) => {
    expect(isPlainColumns(value)).toBe(false);
  });

  it('leaves the problems to zod: an employee with a bad column is still refused, by path', () => {
    const employee = {
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      currencyCode: 'GBP',
      eligibilityStatus: 'eligible',
      columns: { department: { ...text, value: 42 } },
    };
    const result = Employee.safeParse(employee);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['columns.department.value', 'a text column value must be a string'],
    ]);
  });
});
