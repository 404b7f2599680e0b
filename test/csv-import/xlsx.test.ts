// Excel workbooks as they come (docs/import-format.md, "Excel workbooks"): the sheet chosen
// (the first visible one, or --sheet NAME), empty rows at the end ignored, and each workbook
// that cannot be read as it is — a formula without its saved result, an error cell, merged
// header cells, a password, a damaged file, an Excel 97–2003 file, a zip bomb, too many
// rows — refused with its message in plain words, the database unchanged. The real CLI on
// a real database; the workbooks are made here, by exceljs (and the zip files by hand).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import { dumpDatabase, freshCopiesOf, runCli, type TempDatabase } from '../helpers/cli.js';

const CYCLE = 'mc_5e0c2a54-1d1b-4a5e-9b0e-0d7c5d2e6a11';
const column = (name: string, type: string, value: unknown) => ({ name, type, value });
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
        {
          email: 'first@sheets.example',
          firstName: 'First',
          lastName: 'Last',
          currencyCode: 'EUR',
          eligibilityStatus: 'eligible',
          columns: {
            hire: column('Hire Date', 'date', '2020-03-15'),
            pay: column('Base Pay', 'currency', { EUR: '85000.00' }),
          },
        },
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
];
const row = (email: string, hire: unknown = new Date('2021-06-01T00:00:00Z'), pay: unknown = 1) => [
  email,
  'Ada',
  'Lovelace',
  'EUR',
  'eligible',
  hire,
  pay,
];
const WORKBOOK = fileURLToPath(new URL('../fixtures/xlsx/employees.xlsx', import.meta.url));
const NOTHING = 'compplan: the data set was not imported; nothing changed.';

/** A workbook of sheets (name → rows, header first), as exceljs writes it. */
async function workbook(
  sheets: { name: string; rows: unknown[][]; hidden?: boolean; merge?: string }[],
): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  for (const { name, rows, hidden, merge } of sheets) {
    const sheet = book.addWorksheet(name, hidden ? { state: 'hidden' } : {});
    for (const cells of rows) sheet.addRow(cells);
    if (merge) sheet.mergeCells(merge);
  }
  return Buffer.from(await book.xlsx.writeBuffer());
}

/** A zip file of stored or deflated entries, each with the sizes it declares. */
function zipOf(entries: { name: string; data: Buffer; size?: number; deflate?: boolean }[]) {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, size, deflate } of entries) {
    const body = deflate ? deflateRawSync(data) : data;
    const fileName = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(deflate ? 8 : 0, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size ?? data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(deflate ? 8 : 0, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size ?? data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, body);
    centrals.push(central, fileName);
    offset += 30 + fileName.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const CONTENT_TYPES = { name: '[Content_Types].xml', data: Buffer.from('<Types/>') };

describe('compplan import FILE.xlsx: workbooks as they come', { timeout: 120_000 }, () => {
  let db: TempDatabase;
  const importXlsx = (content: Buffer, flags: string[] = []) => {
    const file = `${db.dir}/employees.xlsx`;
    db.writeFile('employees.xlsx', content as unknown as string);
    return runCli(['import', file, '--org', 'sheets', '--cycle', CYCLE, ...flags], {
      env: db.env,
      timeoutMs: 60_000,
    });
  };
  /** Each employee's email and columns as stored. */
  const stored = () =>
    Object.fromEntries(
      (dumpDatabase(db.path).merit_cycle_employees as { email: string; body: string }[]).map(
        (row) => [row.email, (JSON.parse(row.body) as { columns: unknown }).columns],
      ),
    );
  /** Refused with these lines after the first, and nothing in the database changed. */
  const refused = async (content: Buffer, lines: string[], flags: string[] = []) => {
    const before = dumpDatabase(db.path);
    const result = await importXlsx(content, flags);
    expect(result.stderr.split('\n')).toEqual([NOTHING, ...lines, '']);
    expect(result.code).toBe(1);
    expect(dumpDatabase(db.path)).toEqual(before);
  };

  const databases = freshCopiesOf(DATA_SET);
  beforeEach(() => {
    db = databases.current();
  });

  it('reads the first visible sheet, or the sheet --sheet names; empty rows at the end are left out', async () => {
    const book = await workbook([
      { name: 'Notes', rows: [['not', 'employees']], hidden: true },
      { name: 'Employees', rows: [HEADER, row('ada@sheets.example'), [], [null, null]] },
      { name: 'Other', rows: [HEADER, row('bob@sheets.example', '2022-02-02', 12.5)] },
    ]);
    const first = await importXlsx(book);
    expect(first.stderr).toBe('');
    expect(first.stdout).toContain('employees:    1 created, 0 updated, 0 unchanged, 0 removed');
    const named = await importXlsx(book, ['--sheet', 'other']);
    expect(named.stderr).toBe('');
    expect(stored()).toEqual({
      'first@sheets.example': {
        hire: column('Hire Date', 'date', '2020-03-15'),
        pay: column('Base Pay', 'currency', { EUR: '85000.00' }),
      },
      'ada@sheets.example': {
        hire: column('Hire Date', 'date', '2021-06-01'),
        pay: column('Base Pay', 'currency', { EUR: '1' }),
      },
      // A text cell in a date column is read as YYYY-MM-DD; 12.5 a number cell.
      'bob@sheets.example': {
        hire: column('Hire Date', 'date', '2022-02-02'),
        pay: column('Base Pay', 'currency', { EUR: '12.5' }),
      },
    });
  });

  it('a workbook on standard input (-) is told by its content and read the same', async () => {
    const result = await runCli(['import', '-', '--org', 'sheets', '--cycle', CYCLE], {
      env: db.env,
      input: readFileSync(WORKBOOK),
      timeoutMs: 60_000,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('employees:    3 created, 0 updated, 0 unchanged, 0 removed');
    // Columns the cycle does not know are new text columns: a cell's value as text.
    expect(stored()['grace@sheets.example']).toEqual({
      city: column('City', 'text', 'Arlington'),
      hire: column('Hire Date', 'date', '1999-12-31'),
      manager: column('Manager', 'text', 'false'),
      pay: column('Base Pay', 'currency', { EUR: '123456.78' }),
      ratio: column('Ratio', 'text', '1.05'),
    });
  });

  it('a sheet that is not there, and --sheet beside a CSV file, are refused', async () => {
    await refused(
      await workbook([{ name: 'Employees', rows: [HEADER] }]),
      ['the workbook has no sheet "Pay"; its sheets are "Employees"'],
      ['--sheet', 'Pay'],
    );
    const csv = await runCli(
      [
        'import',
        db.writeFile('e.csv', `${HEADER.join(',')}\n`),
        '--org',
        'sheets',
        '--cycle',
        CYCLE,
        '--sheet',
        'x',
      ],
      { env: db.env },
    );
    expect(csv.stderr).toContain('--sheet is for an Excel workbook (.xlsx)');
    expect(csv.code).toBe(2);
  });

  it('formulas without a saved result, error cells and merged header cells: each a problem of its cell', async () => {
    const book = await workbook([
      {
        name: 'Employees',
        rows: [
          [...HEADER.slice(0, 6), null],
          row('ada@sheets.example', { formula: 'TODAY()' }),
          row('bob@sheets.example', undefined, { error: '#DIV/0!' }),
          row('cy@sheets.example', undefined, { formula: '1+1', result: 2 }),
          // Text in a date column: read as YYYY-MM-DD only.
          row('di@sheets.example', '15/03/2025'),
        ],
        merge: 'F1:G1',
      },
    ]);
    await refused(book, [
      `5 problems (each explained at /app/help/import). Read as: Excel workbook, sheet "Employees", cells as typed (date cells as dates, number cells as numbers).`,
      '(column G): This column is not one the import knows. Rename it to a column the import reads (the merit cycle’s templates have them all), delete it, or choose “ignore columns the import does not know”.',
      '  row 1: "(column G)"',
      'Cells of the first row are merged into one. Unmerge the cells of the first row and give each column its own name, as the format lists them.',
      '  row 1: "F1:G1"',
      'columns.hire: This cell holds a formula whose result was not saved with the workbook. Open the workbook in Excel or LibreOffice, let it calculate, and save it again; or copy the cells and paste them as values.',
      '  row 2: "=TODAY()"',
      '(column G): This cell holds an error (such as #N/A or #DIV/0!), not a value. Correct the formula or write the value in the cell.',
      '  row 3: "#DIV/0!"',
      'columns.hire: This is neither a date cell nor a date written as YYYY-MM-DD. Make the cell a date (format it as a date), or write the date as YYYY-MM-DD (for example 2025-03-15).',
      '  row 5: "15/03/2025"',
    ]);
  });

  it('a formula’s saved result of 0, FALSE or TRUE is read as it is: not taken for a formula without its result', async () => {
    const book = await workbook([
      {
        name: 'Employees',
        rows: [
          [...HEADER, 'columns.flag'],
          [
            ...row('ada@sheets.example', undefined, { formula: '1-1', result: 0 }),
            { formula: '1>2', result: false },
          ],
          [
            ...row('bob@sheets.example', undefined, { formula: '1+1', result: 2 }),
            { formula: '2>1', result: true },
          ],
        ],
      },
    ]);
    const result = await importXlsx(book);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // A column the cycle does not know is a text column: the yes-or-no result as text.
    expect(stored()['ada@sheets.example']).toEqual({
      flag: column('Flag', 'text', 'false'),
      hire: column('Hire Date', 'date', '2021-06-01'),
      pay: column('Base Pay', 'currency', { EUR: '0' }),
    });
    expect(stored()['bob@sheets.example']).toMatchObject({
      flag: column('Flag', 'text', 'true'),
      pay: column('Base Pay', 'currency', { EUR: '2' }),
    });
  });

  it('a sheet of more than 50,000 rows is refused', async () => {
    const rows = Array.from({ length: 50_001 }, (_, i) => [`e${i}@sheets.example`]);
    await refused(await workbook([{ name: 'Employees', rows: [['email'], ...rows] }]), [
      'row 50002: more than 50,000 rows, the limit for a spreadsheet import (one merit cycle); give a larger data set as NDJSON',
    ]);
  });

  it('a password-protected workbook, an Excel 97–2003 file and a damaged one are refused plainly', async () => {
    const ole = Buffer.alloc(2048);
    Buffer.from('d0cf11e0a1b11ae1', 'hex').copy(ole);
    const encrypted = Buffer.from(ole);
    Buffer.from('EncryptedPackage', 'utf16le').copy(encrypted, 1024);
    await refused(encrypted, [
      'the workbook is protected with a password, so it cannot be read. Open it in Excel, remove the password (File → Info → Protect Workbook → Encrypt with Password, and clear it), save it and load it again',
    ]);
    await refused(ole, [
      'this is an Excel 97–2003 workbook (.xls), which is not read. Open it in Excel or LibreOffice and save it as an Excel workbook (.xlsx), or as CSV UTF-8',
    ]);
    const damaged = readFileSync(WORKBOOK).subarray(0, 2000);
    await refused(damaged, [
      'the file is damaged or not a complete Excel workbook: open it in Excel or LibreOffice and save it again as an Excel workbook (.xlsx)',
    ]);
    await refused(
      zipOf([{ name: 'word/document.xml', data: Buffer.from('<w/>') }, CONTENT_TYPES]),
      [
        'the file is a zip archive but not an Excel workbook (.xlsx): open it in Excel or LibreOffice and save it again as an Excel workbook (.xlsx), or as CSV UTF-8',
      ],
    );
  });

  it('a zip bomb is refused without being unpacked: by the sizes it declares, by the bytes it inflates, by its number of parts', async () => {
    const bomb = [
      'the workbook unpacks to more than 256 MiB or more than 1,000 parts, more than a sheet of one merit cycle takes; the workbook was not read. Save the sheet alone as a new workbook, or as CSV UTF-8',
    ];
    const zeros = Buffer.alloc(64 * 1024 * 1024);
    // Declares what it holds: 5 × 64 MiB of zeros (320 KiB deflated).
    const declared = Array.from({ length: 5 }, (_, i) => ({
      name: `xl/media/zeros${i}.bin`,
      data: zeros,
      deflate: true,
    }));
    await refused(zipOf([CONTENT_TYPES, ...declared]), bomb);
    // Declares 1 KiB, inflates to 64 MiB: stopped as it inflates.
    await refused(
      zipOf([
        CONTENT_TYPES,
        { name: 'xl/worksheets/sheet1.xml', data: zeros, size: 1024, deflate: true },
      ]),
      bomb,
    );
    const many = Array.from({ length: 1001 }, (_, i) => ({ name: `p${i}`, data: Buffer.alloc(0) }));
    await refused(zipOf(many), bomb);
  });
});
