// The six column types (docs/import-format.md, "Column types"): every rule, each value the
// import accepts (and how it is stored and served) and each it refuses (with its path, the
// file changing nothing), on JSON, NDJSON and CSV alike, on the suite's database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEmployeesCsv } from '../../src/import/cycle-csv.js';
import { ImportError } from '../../src/import/errors.js';
import { type ImportSummary, importRecords } from '../../src/import/load.js';
import { SheetProblemsError } from '../../src/import/sheet-problems.js';
import { recordsOfStream } from '../../src/import/source.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dumpTables } from '../helpers/snapshot.js';

const ORG = 'typed';
const CYCLE_ID = 'mc_70000000-0000-4000-8000-000000000001';
const ADA = 'mce_70000000-0000-4000-8000-000000000001';
const BEN = 'mce_70000000-0000-4000-8000-000000000002';
const CYCLES = '/v1/compensationPlanning/meritCycles';

const ORGANIZATION = `{"slug": "${ORG}", "name": "Typed", "apiKeysEnabled": true}`;
const CYCLE_FIELDS = `"id": "${CYCLE_ID}", "name": "2026 Merit", "status": "active", "startDate": "2026-01-01T00:00:00Z", "endDate": "2026-03-31T00:00:00Z", "createdDate": "2025-12-01T00:00:00Z", "currency": "EUR"`;
const employeeFields = (id: string, name: string) =>
  `"id": "${id}", "email": "${name.toLowerCase()}@typed.example", "firstName": "${name}", "lastName": "Typed", "currencyCode": "GBP", "eligibilityStatus": "eligible"`;

/** The employees' columns, each given as JSON text, so that numbers are written as a file has them. */
type ColumnsText = [ada: string, ben?: string];

function jsonText([ada, ben = '{}']: ColumnsText): string {
  return `{"organization": ${ORGANIZATION}, "meritCycles": [{${CYCLE_FIELDS}, "employees": [
    {${employeeFields(ADA, 'Ada')}, "columns": ${ada}},
    {${employeeFields(BEN, 'Ben')}, "columns": ${ben}}]}]}`;
}

function ndjsonText([ada, ben = '{}']: ColumnsText): string {
  return [
    `{"organization": ${ORGANIZATION}}`,
    `{"meritCycle": {${CYCLE_FIELDS}}}`,
    `{"employee": {${employeeFields(ADA, 'Ada')}, "columns": ${ada}}, "meritCycle": "${CYCLE_ID}"}`,
    `{"employee": {${employeeFields(BEN, 'Ben')}, "columns": ${ben}}, "meritCycle": "${CYCLE_ID}"}`,
    '',
  ].join('\n');
}

const FORMATS = [
  { format: 'JSON', name: 'data-set.json', text: jsonText, line: (_: number) => '' },
  {
    format: 'NDJSON',
    name: 'data-set.ndjson',
    text: ndjsonText,
    line: (n: number) => `line ${n}: `,
  },
] as const;

const column = (type: string, value: string, name = 'Pay') =>
  `{"c": {"name": "${name}", "type": "${type}", "value": ${value}}}`;

/** [type, the value as a file writes it, the value stored and served] */
const ACCEPTED: [string, string, unknown][] = [
  ['text', '"Engineering"', 'Engineering'],
  ['text', '""', ''],
  ['text', 'null', null],
  ['number', '"95000.00"', '95000.00'],
  ['number', '"-0.50"', '-0.50'],
  ['number', '"007"', '007'],
  ['number', '120000.5', '120000.5'],
  ['number', '1e21', '1000000000000000000000'],
  ['number', '1.5e-7', '0.00000015'],
  ['number', '-42', '-42'],
  ['number', '0.1', '0.1'],
  ['number', 'null', null],
  ['date', '"2024-02-29"', '2024-02-29'],
  ['date', '"0001-01-01"', '0001-01-01'],
  ['date', 'null', null],
  ['boolean', 'true', true],
  ['boolean', 'false', false],
  ['boolean', 'null', null],
  ['currency', '{"EUR": "120000.00"}', { EUR: '120000.00' }],
  ['currency', '{"EUR": 95000}', { EUR: '95000' }],
  ['currency', '{"EUR": 1e21}', { EUR: '1000000000000000000000' }],
  ['currency', 'null', null],
  [
    'composite',
    '{"fullName": "Ada Typed", "level": "5", "hired": "2020-01-31", "bonus": {"EUR": 1000.5}}',
    { fullName: 'Ada Typed', level: '5', hired: '2020-01-31', bonus: { EUR: '1000.5' } },
  ],
  ['composite', '{}', {}],
  ['composite', 'null', null],
  // Any other type is open: any JSON value, kept exactly (a number stays a number).
  ['score', '1e21', 1e21],
  ['score', '[1, "two", {"three": null}]', [1, 'two', { three: null }]],
];

const NUMBER =
  'a number column value must be a decimal string such as "0.97", a JSON number, or null';
const DATE = 'a date column value must be a calendar date YYYY-MM-DD that exists, or null';
const CURRENCY_SHAPE =
  'a currency column value must be an object with one key, the merit cycle\'s currency code, whose value is a decimal string: {"EUR": "120000.00"}';
const AMOUNT = 'a currency amount must be a decimal string such as "120000.00", or a JSON number';
const PART =
  'a composite column part must be a string (text, a decimal or a date) or a currency object';

/** [type, the value as a file writes it, the path below the column, the message] */
const REFUSED: [string, string, string, string][] = [
  ['text', '42', 'value', 'a text column value must be a string or null'],
  ['text', '["a"]', 'value', 'a text column value must be a string or null'],
  ['number', '"1e5"', 'value', NUMBER],
  ['number', '"1,000"', 'value', NUMBER],
  ['number', '" 12"', 'value', NUMBER],
  ['number', '"+12"', 'value', NUMBER],
  ['number', '".5"', 'value', NUMBER],
  ['number', '""', 'value', NUMBER],
  ['number', 'true', 'value', NUMBER],
  ['number', '1e400', 'value', 'is a number too large to store'],
  ['date', '"2025-02-29"', 'value', DATE],
  ['date', '"2025-1-5"', 'value', DATE],
  ['date', '"2025-01-01T00:00:00Z"', 'value', DATE],
  ['date', '"0000-01-01"', 'value', DATE],
  ['date', '20250101', 'value', DATE],
  ['boolean', '"true"', 'value', 'a boolean column value must be true, false or null'],
  ['boolean', '1', 'value', 'a boolean column value must be true, false or null'],
  ['currency', '"120000"', 'value', CURRENCY_SHAPE],
  ['currency', '120000', 'value', CURRENCY_SHAPE],
  ['currency', '{}', 'value', CURRENCY_SHAPE],
  ['currency', '{"EUR": "1", "USD": "2"}', 'value', CURRENCY_SHAPE],
  [
    'currency',
    '{"USD": "1.00"}',
    'value.USD',
    "must be the merit cycle's currency, EUR: amounts are in the cycle's currency",
  ],
  ['currency', '{"EUR": "abc"}', 'value.EUR', AMOUNT],
  ['currency', '{"EUR": null}', 'value.EUR', AMOUNT],
  [
    'composite',
    '"Ada Typed"',
    'value',
    'a composite column value must be an object of named parts (strings, decimals, dates or currency objects), or null',
  ],
  ['composite', '{"level": 5}', 'value.level', PART],
  ['composite', '{"level": null}', 'value.level', PART],
  ['composite', '{"tags": ["a"]}', 'value.tags', PART],
  [
    'composite',
    '{"pay": {"GBP": "1"}}',
    'value.pay.GBP',
    "must be the merit cycle's currency, EUR: amounts are in the cycle's currency",
  ],
];

const ONE = 'a column has one name and one type within a merit cycle';

/** [what, Ada's and Ben's columns, the path below Ben's employee, the message] */
const CONFLICTS: [string, ColumnsText, string, string][] = [
  [
    'a second type',
    [column('number', '"1"'), column('text', '"1"')],
    'columns.c.type',
    `is "text", but the column is "number" at employees[0]: ${ONE}`,
  ],
  [
    'a second name',
    [column('number', '"1"'), column('number', '"1"', 'Salary')],
    'columns.c.name',
    `is "Salary", but the column is named "Pay" at employees[0]: ${ONE}`,
  ],
  [
    'a part that is a currency object for one employee and a string for another',
    [column('composite', '{"p": {"EUR": "1"}}'), column('composite', '{"p": "1"}')],
    'columns.c.value.p',
    'is a string, but this part is a currency object at employees[0]: a part has one type within a merit cycle',
  ],
];

describe('column types in an import', () => {
  let server: TestServer;
  let key: string;

  async function load(name: string, text: string): Promise<ImportSummary> {
    const chunks = async function* () {
      yield Buffer.from(text);
    };
    return importRecords(server.database, await recordsOfStream(name, chunks()));
  }

  async function refusal(attempt: Promise<unknown>): Promise<readonly string[]> {
    const error = await attempt.catch((caught: unknown) => caught);
    // A spreadsheet's problems: the groups, after the line that counts them and says how
    // the file was read.
    if (error instanceof SheetProblemsError) return error.lines.slice(1);
    if (error instanceof ImportError) return error.lines;
    throw error instanceof Error ? error : new Error('the file was accepted');
  }

  async function served(): Promise<Record<string, { columns: Record<string, unknown> }>> {
    const response = await server.request(`${CYCLES}/${CYCLE_ID}/employees`, { key });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as {
      data: { id: string; columns: Record<string, unknown> }[];
    };
    return Object.fromEntries(data.map((employee) => [employee.id, employee]));
  }

  async function schema(): Promise<unknown[]> {
    const response = await server.request(`${CYCLES}/${CYCLE_ID}/columns`, { key });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: unknown[] }).data;
  }

  const csv = (text: string, prune = false) =>
    importEmployeesCsv(server.database, text, {
      org: ORG,
      cycle: CYCLE_ID,
      prune,
      changeRetentionDays: 30,
    });

  beforeAll(async () => {
    server = await startTestServer();
    await load('data-set.json', jsonText(['{}']));
    key = await server.createKey(ORG);
  });
  afterAll(() => server.close());

  for (const { format, name, text } of FORMATS) {
    it(`${format}: stores each accepted value as the type says (JSON numbers as decimal strings), describes the column, and loads the same file again as unchanged`, async () => {
      for (const [type, value, stored] of ACCEPTED) {
        const file = text([column(type, value)]);
        await load(name, file);
        const ada = (await served())[ADA];
        expect(ada?.columns.c, `${type} ${value}`).toStrictEqual({
          name: 'Pay',
          type,
          value: stored,
        });
        expect(await schema(), `${type} ${value}`).toEqual([
          { key: 'c', name: 'Pay', type, parts: type === 'composite' ? expect.any(Array) : null },
        ]);
        expect((await load(name, file)).employees, `${type} ${value} again`).toEqual({
          created: 0,
          updated: 0,
          unchanged: 2,
          removed: 0,
        });
      }
    });

    it(`${format}: refuses each value its type does not allow, at the value's path, changing nothing`, async () => {
      await load(name, text([column('text', '"before"')]));
      const before = await dumpTables(server.database.db);
      const line = format === 'NDJSON' ? 'line 3: ' : '';
      for (const [type, value, below, message] of REFUSED) {
        expect(await refusal(load(name, text([column(type, value)]))), `${type} ${value}`).toEqual([
          `${line}meritCycles[0].employees[0].columns.c.${below}: ${message}`,
        ]);
      }
      expect(await dumpTables(server.database.db)).toEqual(before);
    });

    it(`${format}: refuses a column key with two names or types in one cycle (or a part of two kinds), naming the first conflicting path`, async () => {
      const before = await dumpTables(server.database.db);
      const line = format === 'NDJSON' ? 'line 4: ' : '';
      for (const [what, columns, below, message] of CONFLICTS) {
        expect(await refusal(load(name, text(columns))), what).toEqual([
          `${line}meritCycles[0].employees[1].${below}: ${message}`,
        ]);
      }
      expect(await dumpTables(server.database.db)).toEqual(before);
    });
  }

  it('describes a composite column by the union of its parts, a part of decimals as number, of dates as date, of both kinds of string as text', async () => {
    await load(
      'data-set.json',
      jsonText([
        column(
          'composite',
          '{"level": "5", "hired": "2020-01-31", "bonus": {"EUR": "1"}, "title": "Engineer"}',
        ),
        column('composite', '{"level": "L5", "hired": "2021-02-28", "team": "Core"}'),
      ]),
    );
    expect(await schema()).toEqual([
      {
        key: 'c',
        name: 'Pay',
        type: 'composite',
        parts: [
          { key: 'bonus', type: 'currency' },
          { key: 'hired', type: 'date' },
          { key: 'level', type: 'text' },
          { key: 'team', type: 'text' },
          { key: 'title', type: 'text' },
        ],
      },
    ]);
  });

  describe("CSV, read by the cycle's column schema", () => {
    const HEADER =
      'id,email,firstName,lastName,currencyCode,eligibilityStatus,columns.pay,columns.ratio,columns.start,columns.manager,columns.note,columns.extra,columns.employee.title,columns.employee.bonus';
    const row = (cells: string) =>
      `${HEADER}\r\n${ADA},ada@typed.example,Ada,Typed,GBP,eligible,${cells}\r\n${BEN},ben@typed.example,Ben,Typed,GBP,eligible,1,"0.5",2025-01-01,false,"""x""",,T,2\r\n`;

    beforeAll(async () => {
      // The cycle's columns, typed by a JSON data set.
      await load(
        'data-set.json',
        jsonText([
          `{"pay": {"name": "Base pay", "type": "currency", "value": {"EUR": "1"}},
            "ratio": {"name": "Compa-ratio", "type": "number", "value": "1"},
            "start": {"name": "Start", "type": "date", "value": "2020-01-01"},
            "manager": {"name": "Manager", "type": "boolean", "value": true},
            "note": {"name": "Note", "type": "note", "value": {"a": 1}},
            "employee": {"name": "Employee", "type": "composite", "value": {"title": "T", "bonus": {"EUR": "2"}}}}`,
        ]),
      );
    });

    it('reads each cell as its column\'s type and name: an amount in the cycle\'s currency, a decimal, a date, true/false, JSON for another type; an empty cell is null, "" the empty string', async () => {
      expect(
        (
          await csv(
            row('"120000.00",0.97,2025-02-28,true,"{""a"":[1,2]}","",Staff Engineer,1000.5'),
          )
        ).employees,
      ).toEqual({ created: 0, updated: 2, unchanged: 0, removed: 0 });
      expect((await served())[ADA]?.columns).toStrictEqual({
        pay: { name: 'Base pay', type: 'currency', value: { EUR: '120000.00' } },
        ratio: { name: 'Compa-ratio', type: 'number', value: '0.97' },
        start: { name: 'Start', type: 'date', value: '2025-02-28' },
        manager: { name: 'Manager', type: 'boolean', value: true },
        note: { name: 'Note', type: 'note', value: { a: [1, 2] } },
        extra: { name: 'Extra', type: 'text', value: '' },
        employee: {
          name: 'Employee',
          type: 'composite',
          value: { title: 'Staff Engineer', bonus: { EUR: '1000.5' } },
        },
      });
      await csv(row(',,,,,,,'));
      expect((await served())[ADA]?.columns).toStrictEqual({
        pay: { name: 'Base pay', type: 'currency', value: null },
        ratio: { name: 'Compa-ratio', type: 'number', value: null },
        start: { name: 'Start', type: 'date', value: null },
        manager: { name: 'Manager', type: 'boolean', value: null },
        note: { name: 'Note', type: 'note', value: null },
        extra: { name: 'Extra', type: 'text', value: null },
        employee: { name: 'Employee', type: 'composite', value: null },
      });
    });

    it("refuses a cell its column's type does not allow, by row and column, changing nothing", async () => {
      const before = await dumpTables(server.database.db);
      const amount =
        'This is not an amount written as 1234.56. Write the amount as digits, as 1234.56 (no currency sign), or choose how the file writes amounts.';
      const cases: [string, string, string][] = [
        ['12 500,0.97,2025-01-01,true,1,x,T,1', `columns.pay: ${amount}`, '12 500'],
        [
          '1,abc,2025-01-01,true,1,x,T,1',
          'columns.ratio: This is not a number written as 1234.56. Write the number as digits, as 1234.56, or choose how the file writes numbers.',
          'abc',
        ],
        [
          '1,0.9,2025-02-30,true,1,x,T,1',
          'columns.start: This is not a date written as YYYY-MM-DD. Write the date as YYYY-MM-DD (for example 2025-03-15), or choose how the file writes dates.',
          '2025-02-30',
        ],
        [
          '1,0.9,2025-01-01,maybe,1,x,T,1',
          'columns.manager: This is not a yes or no. Write TRUE or FALSE (or Yes or No), or leave the cell empty.',
          'maybe',
        ],
        ['1,0.9,2025-01-01,true,1,x,T,"1,5"', `columns.employee.bonus: ${amount}`, '1,5'],
      ];
      for (const [cells, problem, value] of cases) {
        expect(await refusal(csv(row(cells))), cells).toEqual([problem, `  row 2: "${value}"`]);
      }
      expect(await dumpTables(server.database.db)).toEqual(before);
    });

    it('refuses a column given another type than the employees the file does not list keep, in JSON and CSV alike; with --prune it replaces it', async () => {
      const before = await dumpTables(server.database.db);
      const adaOnly = `id,email,firstName,lastName,currencyCode,eligibilityStatus,columns.ratio.part\r\n${ADA},ada@typed.example,Ada,Typed,GBP,eligible,x\r\n`;
      expect(await refusal(csv(adaOnly))).toEqual([
        'columns.ratio.*: Is "composite", but the column is "number" of employees of this merit cycle that the file does not list; a column has one name and one type within a merit cycle (list every employee of the cycle, or import with --prune, to change it). See the problem’s words; the help page explains each column.',
        '  row 2',
      ]);
      const json = `{"organization": ${ORGANIZATION}, "meritCycles": [{${CYCLE_FIELDS}, "employees": [{${employeeFields(ADA, 'Ada')}, "columns": {"ratio": {"name": "Compa-ratio", "type": "text", "value": "x"}}}]}]}`;
      expect(await refusal(load('data-set.json', json))).toEqual([
        'meritCycles[0].employees[0].columns.ratio.type: is "text", but the column is "number" of employees of this merit cycle that the file does not list; a column has one name and one type within a merit cycle (list every employee of the cycle, or import with --prune, to change it)',
      ]);
      expect(await dumpTables(server.database.db)).toEqual(before);
      expect((await csv(adaOnly, true)).employees).toMatchObject({ removed: 1 });
      expect(await schema()).toEqual([
        {
          key: 'ratio',
          name: 'Compa-ratio',
          type: 'composite',
          parts: [{ key: 'part', type: 'text' }],
        },
      ]);
    });
  });
});
