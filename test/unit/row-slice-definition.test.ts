// The grammar of `--rows` (src/row-slices/grammar/rows.peggy) and the slice's description
// (src/row-slices/definition.ts): the committed parser is the one peggy makes, what people
// write is read as they meant it, and a description reads back as the same slice — so
// `keys list`, the audit log and the web form show a slice that `--rows` takes again.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byCodePoint } from '../../src/columns/order.js';
import {
  columnLabel,
  describeRows,
  describeSlice,
  parseReportsTo,
  parseRows,
  type RowCondition,
  sliceDefinitionOf,
} from '../../src/row-slices/definition.js';

describe('the --rows grammar', () => {
  it('is committed as peggy generates it from rows.peggy (npm run rows:grammar)', () => {
    const script = fileURLToPath(new URL('../../scripts/rows-grammar.js', import.meta.url));
    const check = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('reads conditions joined by and, = and in, composite parts, quotes of both kinds, in canonical order', () => {
    expect(
      parseRows(
        `department IN (Sales, Engineering) AND country = DE and employee/jobLevel = "L5, senior" and team in ('a ''b''', "say ""hi""", New York)`,
      ),
    ).toEqual([
      { column: 'country', part: null, values: ['DE'] },
      { column: 'department', part: null, values: ['Engineering', 'Sales'] },
      { column: 'employee', part: 'jobLevel', values: ['L5, senior'] },
      { column: 'team', part: null, values: ['New York', "a 'b'", 'say "hi"'] },
    ]);
    // A bare value of several words; "and" ends it only between conditions.
    expect(parseRows('city = New York and country = US')).toEqual([
      { column: 'city', part: null, values: ['New York'] },
      { column: 'country', part: null, values: ['US'] },
    ]);
    expect(parseRows('  ')).toEqual([]);
    expect(sliceDefinitionOf({})).toBeNull();
    expect(sliceDefinitionOf({ reportsTo: ' Ana@Example.com ' })).toEqual({
      conditions: [],
      reportsTo: 'ana@example.com',
    });
  });

  it('refuses what it cannot read, with what to write instead', () => {
    const refusal = (text: string) => {
      try {
        parseRows(text);
      } catch (error) {
        return (error as Error).message;
      }
      return 'read';
    };
    expect(refusal('department in ()')).toBe(
      '--rows: department in () names no value; give at least one, as in department in (A, B)',
    );
    expect(refusal('department = "Sales')).toMatch(
      /^--rows could not be read \(the quote at character 14 is not closed\)\. Write each/,
    );
    expect(refusal('department in (Sales')).toMatch(
      /^--rows could not be read \(it ends too early\)/,
    );
    expect(refusal('department == Sales')).toMatch(
      /^--rows could not be read \(at character 13, "= Sales"\)\. Write each condition as/,
    );
    expect(refusal('department = A and department = B')).toBe(
      '--rows names department twice: put its values in one condition, as in department in (A, B)',
    );
    expect(refusal('department in (A, A)')).toBe(
      '--rows: department names "A" twice: give it once',
    );
    expect(refusal('department = ""')).toBe('--rows: department has an empty value ""');
    expect(refusal(`department = "${'x'.repeat(201)}"`)).toBe(
      '--rows: a value of department has more than 200 characters',
    );
    const values = (count: number) => Array.from({ length: count }, (_, i) => `v${i}`).join(', ');
    expect(refusal(`department in (${values(1_000)})`)).toBe('read');
    expect(refusal(`department in (${values(10_000)})`)).toMatch(
      /^--rows names 10,000 values; a slice takes at most 1,000\./,
    );
    expect(() => parseReportsTo('not an email')).toThrow(
      `--reports-to takes a manager's email, such as ana@example.com; got "not an email"`,
    );
  });

  it('describes a slice as --rows writes it, quoting only what needs quotes', () => {
    const definition = sliceDefinitionOf({
      rows: `department in (Sales, "Sales, EMEA", "and") and employee/jobLevel = L5 and team = 'say "hi"'`,
      reportsTo: 'ana@example.com',
    });
    expect(definition && describeSlice(definition)).toBe(
      'department in (Sales, "Sales, EMEA", "and") and employee/jobLevel = L5 and team = "say ""hi""" and reports to ana@example.com',
    );
  });

  // Text people put in columns and values: words, spaces, the grammar's punctuation, its
  // keywords, other scripts and emoji.
  const piece = fc.oneof(
    fc.constantFrom(
      ' ',
      '  ',
      '\t',
      '\n',
      ',',
      '(',
      ')',
      '"',
      "'",
      '""',
      '=',
      '/',
      'and',
      'AND',
      'in',
      'In',
    ),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
    fc.stringMatching(/^[A-Za-z0-9]{1,8}$/),
  );
  const text = fc
    .array(piece, { minLength: 1, maxLength: 5 })
    .map((pieces) => pieces.join(''))
    .filter((value) => value.length > 0 && value.length <= 200);
  const condition = fc.record({
    column: text,
    part: fc.option(text, { nil: null }),
    values: fc.uniqueArray(text, { minLength: 1, maxLength: 4 }),
  });
  const conditions = fc
    .uniqueArray(condition, { minLength: 1, maxLength: 4, selector: columnLabel })
    // A column with a slash in its key and another's part can share a label: one of them.
    .map((list): RowCondition[] =>
      list
        .map((c) => ({ ...c, values: [...c.values].sort(byCodePoint) }))
        .sort((a, b) => byCodePoint(columnLabel(a), columnLabel(b))),
    );

  it('reads its own description back as the same slice (fast-check)', () => {
    fc.assert(
      fc.property(conditions, (definition) => {
        const described = describeRows({ conditions: definition, reportsTo: null });
        expect(parseRows(described)).toEqual(definition);
      }),
      { numRuns: 500 },
    );
  });
});
