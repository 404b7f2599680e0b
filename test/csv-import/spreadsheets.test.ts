// Spreadsheets as they are (docs/import-format.md, "Spreadsheets as they are"):
// `compplan import FILE.csv` reads what a spreadsheet writes unambiguously — `;` or tab
// between values, TRUE/FALSE and Yes/No, Eligible in any case, a byte order mark — and says
// so; what would be guessed is a flag (--dates, --amounts, --encoding,
// --ignore-unknown-columns). Every problem of a file is reported in one check, grouped, in
// plain words, and --problems writes the whole list as CSV. The real CLI on a real database.
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { dumpDatabase, freshCopiesOf, runCli, type TempDatabase } from '../helpers/cli.js';

const CYCLE = 'mc_5e0c2a54-1d1b-4a5e-9b0e-0d7c5d2e6a11';
const column = (name: string, type: string, value: unknown) => ({ name, type, value });
const employee = (email: string, columns: Record<string, unknown>) => ({
  email,
  firstName: 'First',
  lastName: 'Last',
  currencyCode: 'EUR',
  eligibilityStatus: 'eligible' as const,
  columns,
});
// A cycle whose columns have types: a date, an amount, a yes-or-no, a number, a text.
const DATA_SET: DataSetInput = {
  organization: { slug: 'sheets', name: 'Sheets GmbH' },
  meritCycles: [
    {
      id: CYCLE,
      name: '2026 Merit',
      status: 'active',
      startDate: '2026-01-01T00:00:00.000Z',
      endDate: '2026-03-31T00:00:00.000Z',
      currency: 'EUR',
      employees: [
        employee('ada@sheets.example', {
          hire: column('Hire Date', 'date', '2020-03-15'),
          pay: column('Base Pay', 'currency', { EUR: '85000.00' }),
          manager: column('Manager', 'boolean', true),
          ratio: column('Compa-ratio', 'number', '0.97'),
          city: column('City', 'text', 'Zürich'),
        }),
      ],
    },
  ],
};
const HEADER = [
  'email',
  'firstName',
  'lastName',
  'currencyCode',
  'eligibilityStatus',
  'columns.hire',
  'columns.pay',
  'columns.manager',
  'columns.ratio',
  'columns.city',
];
const READ = 'One problem (each explained at /app/help/import).';

describe('compplan import FILE.csv: spreadsheets as they are', () => {
  let db: TempDatabase;
  const importCsv = (content: string | Uint8Array, flags: string[] = []) =>
    runCli(
      [
        'import',
        db.writeFile('employees.csv', content as string),
        '--org',
        'sheets',
        '--cycle',
        CYCLE,
        ...flags,
      ],
      { env: db.env, timeoutMs: 30_000 },
    );
  /** Each employee's columns as stored, by email. */
  const stored = () =>
    Object.fromEntries(
      (dumpDatabase(db.path).merit_cycle_employees as { email: string; body: string }[]).map(
        (row) => [row.email, (JSON.parse(row.body) as { columns: unknown }).columns],
      ),
    );

  const databases = freshCopiesOf(DATA_SET);
  beforeEach(() => {
    db = databases.current();
  });

  it('a European Excel file (;, BOM, TRUE, Eligible, 15/03/2020, 85.000,00) loads as the JSON did', async () => {
    const before = stored();
    const file = `\uFEFF${[
      HEADER.join(';'),
      'ada@sheets.example;First;Last;eur;Eligible;15/03/2020;85.000,00;TRUE;0,97;Zürich',
    ].join('\r\n')}\r\n`;
    const result = await importCsv(file, ['--dates', 'DD/MM/YYYY', '--amounts', '1.234,56']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('employees:    0 created, 0 updated, 1 unchanged, 0 removed');
    expect(stored()).toEqual(before);
  });

  it('tab-separated, Yes/No and US writing (03/15/2020, 85,000.00) load as the JSON did', async () => {
    const before = stored();
    const file = `${[HEADER.join('\t'), 'ada@sheets.example\tFirst\tLast\tEUR\teligible\t3/15/2020\t"85,000.00"\tyes\t0.97\tZürich'].join('\n')}\n`;
    const result = await importCsv(file, ['--dates', 'MM/DD/YYYY', '--amounts', '1,234.56']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(stored()).toEqual(before);
  });

  it('Windows-1252: refused as UTF-8 with the row named; loaded with --encoding windows-1252', async () => {
    const before = stored();
    const text = `${HEADER.join(',')}\r\nada@sheets.example,First,Last,EUR,eligible,2020-03-15,85000.00,true,0.97,Zürich\r\n`;
    const bytes = Buffer.from(text, 'latin1');
    const refused = await importCsv(bytes);
    expect(refused.code).toBe(1);
    expect(refused.stderr.split('\n').slice(2)).toEqual([
      'The file is not written in the encoding chosen (UTF-8). Save the file as “CSV UTF-8” from your spreadsheet, or choose the encoding Windows-1252 (older Excel on Windows).',
      '  row 2: "ada@sheets.example,First,Last,EUR,eligible,2020-03-15,85000.00,true,0.97,Z\uFFFDrich"',
      '',
    ]);
    expect(stored()).toEqual(before);
    const loadedAs1252 = await importCsv(bytes, ['--encoding', 'windows-1252']);
    expect(loadedAs1252).toMatchObject({ code: 0, stderr: '' });
    expect(stored()).toEqual(before);
  });

  it('one check reports every problem at once — an unknown column with the dates and amounts — grouped; --problems writes each', async () => {
    const before = stored();
    const rows = Array.from(
      { length: 73 },
      (_, i) => `e${i}@sheets.example,First,Last,EUR,eligible,03/15/2025,85000.00,FALSE,1,x`,
    );
    const file = `${[`${HEADER.join(',')},Notes`, ...rows.map((row) => `${row},n`), 'bad@sheets.example,First,Last,EUR,eligible,2025-03-15,"85,000",=1+1,1,x,n'].join('\n')}\n`;
    const problems = `${db.dir}/problems.csv`;
    const result = await importCsv(file, ['--problems', problems]);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      'compplan: the data set was not imported; nothing changed.',
      "76 problems (each explained at /app/help/import). Read as: separator ',', encoding UTF-8, dates YYYY-MM-DD, amounts 1234.56, booleans TRUE/FALSE.",
      'Notes: This column is not one the import knows. Rename it to a column the import reads (the merit cycle’s templates have them all), delete it, or choose “ignore columns the import does not know”.',
      '  row 1: "Notes"',
      'columns.hire (73 times): This is not a date written as YYYY-MM-DD. Write the date as YYYY-MM-DD (for example 2025-03-15), or choose how the file writes dates.',
      '  row 2: "03/15/2025"',
      '  row 3: "03/15/2025"',
      '  row 4: "03/15/2025"',
      '  row 5: "03/15/2025"',
      '  row 6: "03/15/2025"',
      '  … and 68 more',
      'columns.pay: This is not an amount written as 1234.56. Write the amount as digits, as 1234.56 (no currency sign), or choose how the file writes amounts.',
      '  row 75: "85,000"',
      'columns.manager: This is not a yes or no. Write TRUE or FALSE (or Yes or No), or leave the cell empty.',
      '  row 75: "=1+1"',
      '',
    ]);
    const list = readFileSync(problems, 'utf8').split('\r\n');
    expect(list).toHaveLength(1 + 76 + 1);
    expect(list.slice(0, 3)).toEqual([
      'row,column,value,problem',
      '1,Notes,Notes,"This column is not one the import knows. Rename it to a column the import reads (the merit cycle’s templates have them all), delete it, or choose “ignore columns the import does not know”."',
      '2,columns.hire,03/15/2025,"This is not a date written as YYYY-MM-DD. Write the date as YYYY-MM-DD (for example 2025-03-15), or choose how the file writes dates."',
    ]);
    // A cell a spreadsheet would run as a formula is written as text.
    expect(list[76]).toBe(
      `75,columns.manager,'=1+1,"This is not a yes or no. Write TRUE or FALSE (or Yes or No), or leave the cell empty."`,
    );
    expect(stored()).toEqual(before);

    // The dates told, the unknown column ignored: the two cells left, and the last row’s
    // date, which is not written as told.
    const told = await importCsv(file, ['--dates', 'MM/DD/YYYY', '--ignore-unknown-columns']);
    expect(told.stderr.split('\n')[1]).toBe(
      `3 problems (each explained at /app/help/import). Read as: separator ',', encoding UTF-8, dates MM/DD/YYYY, amounts 1234.56, booleans TRUE/FALSE, columns ignored: "Notes".`,
    );
  });

  it('a file whose rows use different separators is refused plainly', async () => {
    const file = `${HEADER.join(';')}\nada@sheets.example,First,Last,EUR,eligible,2020-03-15,85000.00,true,0.97,Zürich\n`;
    const result = await importCsv(file);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').slice(1)).toEqual([
      `${READ} Read as: separator ';', encoding UTF-8, dates YYYY-MM-DD, amounts 1234.56.`,
      'The rows separate their values with different characters (, ; or tab). Save the file again from your spreadsheet as one CSV file, so that every row uses the same separator.',
      '  row 2: "ada@sheets.example,First,Last,EUR,eligible,2020-03-15,85000.00,true,0.97,Zürich"',
      '',
    ]);
  });
});
