// `compplan import FILE.csv --org SLUG --cycle ID`: the real CLI on a real database; what
// it loaded is read back through the real API.
import { beforeEach, describe, expect, it } from 'vitest';
import { SDK_CYCLE, SDK_ORG, sdkDataSet, sdkEmployee } from '../client/fixtures.js';
import { dumpDatabase, freshCopiesOf, runCli, type TempDatabase } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const HEADER =
  'id,email,firstName,lastName,preferredName,currencyCode.code,currencyCode.value,eligibilityStatus,columns.department,columns.employee.fullName,columns.employee.jobLevel,columns.employee.jobTitle,columns.other';

const csv = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;
const NOT_IMPORTED = 'compplan: the data set was not imported; nothing changed.\n';
const READ_AS = "separator ',', encoding UTF-8, dates YYYY-MM-DD, amounts 1234.56";
/** What the command prints for a refused spreadsheet: the count, how it was read, the groups. */
const refusal = (count: number, lines: string[], readAs = READ_AS) =>
  [
    `${NOT_IMPORTED}${count === 1 ? 'One problem' : `${count} problems`} (each explained at /app/help/import). Read as: ${readAs}.`,
    ...lines,
    '',
  ].join('\n');

describe('compplan import FILE.csv --org --cycle', () => {
  let db: TempDatabase;
  const run = (args: string[], input?: string) =>
    runCli(args, { env: db.env, ...(input === undefined ? {} : { input }), timeoutMs: 30_000 });
  const importCsv = (content: string, extra: string[] = []) =>
    run([
      'import',
      db.writeFile('employees.csv', content),
      '--org',
      SDK_ORG,
      '--cycle',
      SDK_CYCLE.big,
      ...extra,
    ]);

  // The data set, loaded once by `compplan import`; each test starts from a copy of it.
  const databases = freshCopiesOf(sdkDataSet(3));
  beforeEach(() => {
    db = databases.current();
  });

  async function employeesServed(): Promise<unknown[]> {
    const server: TestServer = await startTestServer({
      database: { dialect: 'sqlite', path: db.path },
    });
    try {
      const key = await server.createKey(SDK_ORG);
      const response = await server.request(
        `/v1/compensationPlanning/meritCycles/${SDK_CYCLE.big}/employees?limit=100`,
        { key },
      );
      return ((await response.json()) as { data: unknown[] }).data;
    } finally {
      await server.close();
    }
  }

  it('loads new employees and updates matched ones, columns flattened as the export writes them; an empty cell is null', async () => {
    const result = await importCsv(
      csv(
        'email,firstName,lastName,preferredName,currencyCode,eligibilityStatus,columns.department,columns.employee.jobTitle,columns.employee.jobLevel,columns.costCenter',
        'kim@sdk.example,Kim,"Park, PhD",,KRW,eligible,"Research, Seoul",Scientist,L4,CC-7',
        'person0@sdk.example,Ada,Lovelace,Countess,GBP,ineligible,Engineering,Engineer,L1,',
      ),
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        'Imported sdk:',
        '  merit cycles: 0 created, 0 updated, 1 unchanged',
        '  employees:    1 created, 1 updated, 0 unchanged, 0 removed',
        '',
      ].join('\n'),
    );
    const served = (await employeesServed()) as { email: string }[];
    expect(served.find((employee) => employee.email === 'kim@sdk.example')).toEqual({
      id: expect.stringMatching(/^mce_[0-9a-f-]{36}$/),
      email: 'kim@sdk.example',
      firstName: 'Kim',
      lastName: 'Park, PhD',
      preferredName: null,
      currencyCode: { code: 'KRW', value: 'South Korean Won' },
      eligibilityStatus: 'eligible',
      columns: {
        department: { name: 'Department', type: 'text', value: 'Research, Seoul' },
        employee: {
          name: 'Employee',
          type: 'composite',
          value: { jobTitle: 'Scientist', jobLevel: 'L4' },
        },
        costCenter: { name: 'Cost center', type: 'text', value: 'CC-7' },
      },
    });
    expect(served.find((employee) => employee.email === 'person0@sdk.example')).toEqual(
      expect.objectContaining({
        id: sdkEmployee(0).id,
        preferredName: 'Countess',
        eligibilityStatus: 'ineligible',
        columns: {
          department: { name: 'Department', type: 'text', value: 'Engineering' },
          employee: {
            name: 'Employee',
            type: 'composite',
            value: { jobTitle: 'Engineer', jobLevel: 'L1' },
          },
          costCenter: { name: 'Cost center', type: 'text', value: null },
        },
      }),
    );
  });

  it('loads back what `compplan export employees` wrote, changing nothing', async () => {
    const server = await startTestServer({ database: { dialect: 'sqlite', path: db.path } });
    let exported: string;
    try {
      const key = await server.createKey(SDK_ORG);
      const result = await runCli(
        ['export', 'employees', '--cycle', SDK_CYCLE.big, '--base-url', server.url, '--key', key],
        { timeoutMs: 30_000 },
      );
      expect(result.code).toBe(0);
      exported = result.stdout;
    } finally {
      await server.close();
    }
    expect(exported.startsWith(`\uFEFF${HEADER}\r\n`)).toBe(true);
    const before = dumpDatabase(db.path).merit_cycle_employees;
    const result = await importCsv(exported);
    expect(result.stdout).toContain('employees:    0 created, 0 updated, 3 unchanged, 0 removed');
    expect(dumpDatabase(db.path).merit_cycle_employees).toEqual(before);
  });

  it('refuses the whole file, changing nothing, and names the row (its line) and column of each problem', async () => {
    const before = dumpDatabase(db.path);
    const result = await importCsv(
      csv(
        'email,firstName,lastName,currencyCode,eligibilityStatus,columns.department',
        'good@sdk.example,Good,Row,USD,eligible,Ops',
        'not-an-email,Bad,Email,USD,eligible,Ops',
        'x@sdk.example,"Multi',
        'line",Name,XXX,maybe,Ops',
        'GOOD@sdk.example,Same,Email,USD,eligible,',
        'y@sdk.example, ,Blank,EUR,eligible,Ops',
      ),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      refusal(4, [
        'email: This is not an email address. Write the employee’s email address, such as ada@example.com.',
        '  row 3: "not-an-email"',
        'currencyCode: This is not a currency code. Write the three-letter ISO 4217 code of the currency, such as USD, EUR or GBP.',
        '  row 4: "XXX"',
        'eligibilityStatus: This is not an eligibility the import knows. Write Eligible or Ineligible.',
        '  row 4: "maybe"',
        'firstName: This cell must not be empty. Fill it in.',
        '  row 7: " "',
      ]),
    );
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  /** Imports one row under `header`; the columns the API then serves for its employee. */
  async function columnsServedFor(header: string, row: string): Promise<unknown> {
    expect(await importCsv(csv(header, row))).toMatchObject({ code: 0, stderr: '' });
    const email = row.slice(0, row.indexOf(','));
    const served = (await employeesServed()) as { email: string; columns: unknown }[];
    return served.find((employee) => employee.email === email)?.columns;
  }

  it('reads columns.other as more columns: a value not text is a json column, a name not a column is refused', async () => {
    const header = 'email,firstName,lastName,currencyCode,eligibilityStatus,columns.other';
    const columns = await columnsServedFor(
      header,
      'kim@sdk.example,Kim,Park,KRW,eligible,"{""columns.costCenter"": ""CC-7"", ""columns.employee.jobLevel"": ""L4"", ""columns.rating"": [4, 5]}"',
    );
    expect(columns).toEqual({
      costCenter: { name: 'Cost center', type: 'text', value: 'CC-7' },
      employee: { name: 'Employee', type: 'composite', value: { jobLevel: 'L4' } },
      rating: { name: 'Rating', type: 'json', value: [4, 5] },
    });
    const refused = await importCsv(
      csv(
        header,
        'lee@sdk.example,Lee,Ng,USD,eligible,"{""department"": ""Ops"", ""columns.a.b.c"": ""x""}"',
        'mo@sdk.example,Mo,Li,USD,eligible,department=Ops',
      ),
    );
    expect(refused).toMatchObject({
      code: 1,
      stderr: refusal(3, [
        'columns.other: “department” is not a column name. Leave the cell as the export wrote it, or empty; give a new column a column of its own (columns.KEY).',
        '  row 2: "{\\"department\\": \\"Ops\\", \\"columns.a.b.c\\": \\"x\\"}"',
        'columns.other: “columns.a.b.c” is not a column name. Leave the cell as the export wrote it, or empty; give a new column a column of its own (columns.KEY).',
        '  row 2: "{\\"department\\": \\"Ops\\", \\"columns.a.b.c\\": \\"x\\"}"',
        'columns.other: The “columns.other” cell is not what the export writes there. Leave the cell as the export wrote it, or empty; give a new column a column of its own (columns.KEY).',
        '  row 3: "department=Ops"',
      ]),
    });
  });

  it('keeps a column keyed __proto__ as a column, from its own header and from columns.other', async () => {
    const header =
      'email,firstName,lastName,currencyCode,eligibilityStatus,columns.__proto__,columns.other';
    const columns = await columnsServedFor(
      header,
      'ada@sdk.example,Ada,Ng,USD,eligible,kept,"{""columns.constructor.__proto__"": ""part""}"',
    );
    // As text: an object literal's `__proto__:` would set a prototype, not a key.
    expect(JSON.stringify(columns)).toBe(
      '{"__proto__":{"name":" proto ","type":"text","value":"kept"},"constructor":{"name":"Constructor","type":"composite","value":{"__proto__":"part"}}}',
    );
  });

  it('names both rows of an email given twice (emails compare case-insensitively)', async () => {
    const result = await importCsv(
      csv(
        'email,firstName,lastName,currencyCode,eligibilityStatus',
        'twice@sdk.example,One,Row,USD,eligible',
        'other@sdk.example,Other,Row,USD,eligible',
        'TWICE@sdk.example,Two,Row,USD,eligible',
      ),
    );
    expect(result).toMatchObject({
      code: 1,
      stderr: refusal(1, [
        'email: Repeats the email of row 2 (emails compare case-insensitively). Each employee is one row: delete the repeated row, or correct its email.',
        '  row 4: "TWICE@sdk.example"',
      ]),
    });
  });

  it('refuses a header it does not know or that lacks a required column', async () => {
    const result = await importCsv(
      csv(
        'email,firstName,lastname,currencyCode,eligibilityStatus',
        'a@b.example,A,B,USD,eligible',
      ),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      refusal(2, [
        'lastname: This column is not one the import knows. Rename it to a column the import reads (the merit cycle’s templates have them all), delete it, or choose “ignore columns the import does not know”.',
        '  row 1: "lastname"',
        'lastName: A column the import needs is missing from the first row. Add the column, with this name in the first row, and fill it for every row.',
        '  row 1',
      ]),
    );
  });

  it('refuses a row with the wrong number of fields, and a quote that never closes', async () => {
    const short = await importCsv(
      csv('email,firstName,lastName,currencyCode,eligibilityStatus', 'a@b.example,A,B,USD'),
    );
    expect(short.stderr).toBe(
      refusal(1, [
        'This row has 4 values; the first row has 5 columns. Check the row for a value with a separator (, or ;) in it that is not in quotes, or for a missing value.',
        '  row 2',
      ]),
    );
    const open = await importCsv(
      csv(
        'email,firstName,lastName,currencyCode,eligibilityStatus',
        'a@b.example,"A,B,USD,eligible',
      ),
    );
    expect(open.stderr).toContain('A quoted field is never closed. Put a value');
    expect(open.code).toBe(1);
  });

  // A CRLF inside a quoted field is one line break of the file (csv-parse counts two).
  const multiLine = ['a@b.example,"Multi', 'line",B,USD,eligible'];
  const STRAY =
    'A quote inside an unquoted field; quote the whole field and double the quote ("").';
  const UNCLOSED = 'A quoted field is never closed.';
  it.each([
    [
      'an unclosed quote after blank lines',
      ['a@b.example,A,B,USD,eligible', '', '', 'c@d.example,"C,D,USD,eligible'],
      `line 5: ${UNCLOSED}`,
    ],
    [
      'a stray quote after a row with a line break in a field',
      [...multiLine, 'c@d.example,C"s,D,USD,eligible'],
      `line 4: ${STRAY}`,
    ],
    [
      'text after a closing quote after two such rows',
      [...multiLine, ...multiLine, 'c@d.example,"C"s,D,USD,eligible'],
      'line 6: Text after the closing quote of a field.',
    ],
    [
      'a stray quote on the second line of its row',
      ['a@b.example,"Multi', 'line",B"s,USD,eligible'],
      `line 2: ${STRAY}`,
    ],
    [
      'an unclosed quote after a three-line row and a blank line',
      [
        'a@b.example,"Three',
        'line',
        'name",B,USD,eligible',
        '',
        'c@d.example,C,"D',
        'never closed,USD,eligible',
      ],
      `line 6: ${UNCLOSED}`,
    ],
  ])('names the line a syntax problem’s row starts on: %s', async (_, rows, problem) => {
    const result = await importCsv(
      csv('email,firstName,lastName,currencyCode,eligibilityStatus', ...rows),
    );
    const [, row, words] = /^line (\d+): (.*)$/.exec(problem) ?? [];
    expect(result).toMatchObject({
      code: 1,
      stderr: refusal(1, [
        `${words} Put a value that contains quotes in quotes, and double each quote inside it ("" for ").`,
        `  row ${row}`,
      ]),
    });
  });

  it('removes the employees the file does not list with --prune', async () => {
    const result = await importCsv(
      csv(
        'email,firstName,lastName,currencyCode,eligibilityStatus',
        'person1@sdk.example,Zoë,Hopper,EUR,eligible',
      ),
      ['--prune'],
    );
    expect(result.stdout).toContain('employees:    0 created, 1 updated, 0 unchanged, 2 removed');
    expect(
      ((await employeesServed()) as { email: string }[]).map((employee) => employee.email),
    ).toEqual(['person1@sdk.example']);
  });

  it('needs --org and --cycle, and a cycle of that organisation', async () => {
    const file = db.writeFile(
      'e.csv',
      csv('email,firstName,lastName,currencyCode,eligibilityStatus'),
    );
    expect(await run(['import', file, '--org', SDK_ORG])).toMatchObject({
      code: 2,
      stderr: 'compplan: a CSV import needs --org SLUG and --cycle ID\n',
    });
    // The flags beside a JSON data set: said as such, not as a CSV problem of the JSON.
    const dataSet = db.writeFile('data-set.json', '{"organization": {}}');
    expect(
      await run([
        'import',
        dataSet,
        '--org',
        SDK_ORG,
        '--cycle',
        'mc_00000000-0000-4000-8000-000000000000',
      ]),
    ).toMatchObject({
      code: 2,
      stderr: `compplan: --org and --cycle are for a CSV file of one cycle's employees; ${dataSet} is a data set, which names its organisation and cycles itself\n`,
    });
    expect(
      await run([
        'import',
        file,
        '--org',
        SDK_ORG,
        '--cycle',
        'mc_00000000-0000-4000-8000-000000000000',
      ]),
    ).toMatchObject({
      code: 1,
      stderr: `compplan: no merit cycle mc_00000000-0000-4000-8000-000000000000 in organisation "${SDK_ORG}"\n`,
    });
  });
});
