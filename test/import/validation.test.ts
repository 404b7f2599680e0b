// Validation of an import file (docs/import-format.md): every problem is reported with
// the JSON path of the field at fault, before anything is written. Data sets go through
// the loader `compplan import` runs, into a real database; text through the stream it reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../src/import/errors.js';
import { importDataSet, importRecords } from '../../src/import/load.js';
import { NOT_STORABLE } from '../../src/import/schema.js';
import { recordsOfStream } from '../../src/import/source.js';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The fixture as plain JSON, to break in ways its type would not allow.
// biome-ignore lint/suspicious/noExplicitAny: the point is to write what the type forbids
type Json = any;

let server: TestServer;

/** What importing the data set reports; the data set must be refused. */
async function errorOf(dataSet: unknown): Promise<ImportError> {
  const error = await importDataSet(server.database, dataSet).catch((caught: unknown) => caught);
  if (error instanceof ImportError) return error;
  if (error instanceof Error) throw error;
  throw new Error('the data set was accepted');
}

async function problemsOf(mutate: (dataSet: Json) => void): Promise<readonly string[]> {
  const dataSet = JSON.parse(JSON.stringify(acmeDataSet())) as Json;
  mutate(dataSet);
  return (await errorOf(dataSet)).lines;
}

/** What importing the text of a file reports, as `compplan import data-set.json` reads it. */
async function problemsOfText(text: string): Promise<readonly string[]> {
  const chunks = async function* () {
    yield Buffer.from(text);
  };
  try {
    await importRecords(server.database, await recordsOfStream('data-set.json', chunks()));
  } catch (error) {
    if (error instanceof ImportError) return error.lines;
    throw error;
  }
  throw new Error('the text was accepted');
}

const NOT_ISO_4217 = 'must be an ISO 4217 currency code, e.g. USD';

/** `length` random CJK characters: three bytes each in UTF-8, and incompressible. */
function longName(length: number): string {
  return Array.from({ length }, () =>
    String.fromCodePoint(0x4e00 + Math.floor(Math.random() * 0x5000)),
  ).join('');
}

describe('import validation', () => {
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('accepts the reference data set', async () => {
    expect(await importDataSet(server.database, acmeDataSet())).toEqual({
      organization: { slug: ACME, created: true, changed: [] },
      meritCycles: { created: 6, updated: 0, unchanged: 0 },
      employees: { created: 11, updated: 0, unchanged: 0, removed: 0 },
    });
  });

  it.each<[string, (d: Json) => void, string[]]>([
    [
      'a bad email',
      (d) => {
        d.meritCycles[1].employees[3].email = 'not-an-email';
      },
      ['meritCycles[1].employees[3].email: must be an email address'],
    ],
    [
      'an unknown currency code ABC',
      (d) => {
        d.meritCycles[0].employees[0].currencyCode = 'ABC';
      },
      [`meritCycles[0].employees[0].currencyCode: ${NOT_ISO_4217}`],
    ],
    [
      'a lower-case currency code usd',
      (d) => {
        d.meritCycles[0].employees[0].currencyCode = 'usd';
      },
      [`meritCycles[0].employees[0].currencyCode: ${NOT_ISO_4217}`],
    ],
    [
      'a bad code in the object form of currencyCode',
      (d) => {
        d.meritCycles[0].employees[1].currencyCode = { code: 'usd', value: 'US Dollar' };
      },
      [`meritCycles[0].employees[1].currencyCode.code: ${NOT_ISO_4217}`],
    ],
    [
      'a bad cycle currency',
      (d) => {
        d.meritCycles[2].currency = 'ABC';
      },
      [`meritCycles[2].currency: ${NOT_ISO_4217}`],
    ],
    [
      'an exchange rate that is not positive',
      (d) => {
        d.meritCycles[0].exchangeRates.EUR = 0;
      },
      ['meritCycles[0].exchangeRates.EUR: must be a positive number'],
    ],
    [
      'an exchange rate beyond the largest number (1e400 reads as Infinity)',
      (d) => {
        d.meritCycles[0].exchangeRates.EUR = Number.POSITIVE_INFINITY;
      },
      ['meritCycles[0].exchangeRates.EUR: is a number too large to store'],
    ],
    [
      'an exchange rate given as a string',
      (d) => {
        d.meritCycles[0].exchangeRates.EUR = '0.92';
      },
      ['meritCycles[0].exchangeRates.EUR: must be a positive number'],
    ],
    [
      'U+0000 in a name, and unpaired surrogates in the organisation name and a preferred name',
      (d) => {
        d.organization.name = 'Acme \ud800';
        d.meritCycles[0].employees[0].firstName = 'Ada\u0000';
        d.meritCycles[0].employees[1].preferredName = '\udc00Grace';
      },
      [
        `organization.name: ${NOT_STORABLE}`,
        `meritCycles[0].employees[0].firstName: ${NOT_STORABLE}`,
        `meritCycles[0].employees[1].preferredName: ${NOT_STORABLE}`,
      ],
    ],
    [
      'an empty column key',
      (d) => {
        d.meritCycles[0].employees[0].columns[''] = { name: 'Nothing', type: 'text', value: 'x' };
      },
      ['meritCycles[0].employees[0].columns[""]: a column key must not be empty'],
    ],
    [
      'a JSON column value nested 5,000 levels deep, and one holding Infinity',
      (d) => {
        let deep: Json = 'bottom';
        for (let i = 0; i < 5_000; i++) deep = [deep];
        d.meritCycles[0].employees[0].columns.notes = { name: 'Notes', type: 'json', value: deep };
        d.meritCycles[0].employees[1].columns.score = {
          name: 'Score',
          type: 'number',
          value: { best: Number.POSITIVE_INFINITY },
        };
      },
      [
        'meritCycles[0].employees[0].columns.notes.value: is nested deeper than 64 levels',
        'meritCycles[0].employees[1].columns.score.value.best: is a number too large to store',
      ],
    ],
    [
      'a JSON column value nested 64 levels deep is stored',
      (d) => {
        let deep: Json = 'bottom';
        for (let i = 0; i < 64; i++) deep = [deep];
        d.meritCycles[0].employees[0].columns.notes = { name: 'Notes', type: 'json', value: deep };
        d.meritCycles[0].employees[0].email = 'not-an-email';
      },
      ['meritCycles[0].employees[0].email: must be an email address'],
    ],
    [
      'a text column holding a number',
      (d) => {
        d.meritCycles[0].employees[0].columns.department.value = 42;
      },
      [
        'meritCycles[0].employees[0].columns.department.value: a text column value must be a string or null',
      ],
    ],
    [
      'a text column whose key needs quoting',
      (d) => {
        d.meritCycles[0].employees[0].columns['job level'] = { name: 'L', type: 'text', value: 3 };
      },
      [
        'meritCycles[0].employees[0].columns["job level"].value: a text column value must be a string or null',
      ],
    ],
    [
      'a composite column that is not an object',
      (d) => {
        d.meritCycles[0].employees[0].columns.employee.value = 'Ada Lovelace';
      },
      [
        'meritCycles[0].employees[0].columns.employee.value: a composite column value must be an object of named parts (strings, decimals, dates or currency objects), or null',
      ],
    ],
    [
      'a duplicate email in a cycle, compared case-insensitively',
      (d) => {
        d.meritCycles[0].employees[2].email = 'ADA@Acme.Example';
      },
      [
        'meritCycles[0].employees[2].email: repeats the email of employees[0] (emails compare case-insensitively)',
      ],
    ],
    [
      'a duplicate cycle name',
      (d) => {
        d.meritCycles[3].name = '2025 Annual Merit';
      },
      ['meritCycles[3].name: repeats the name of meritCycles[0]'],
    ],
    [
      'an endDate before the startDate',
      (d) => {
        d.meritCycles[0].endDate = '2024-12-31T23:59:59.999Z';
      },
      ['meritCycles[0].endDate: must not be before startDate'],
    ],
    [
      'an endDate before the startDate once both are in UTC',
      (d) => {
        // 2024-12-31T22:00:00Z, one millisecond after the endDate.
        d.meritCycles[0].startDate = '2025-01-01T00:00:00+02:00';
        d.meritCycles[0].endDate = '2024-12-31T21:59:59.999Z';
      },
      ['meritCycles[0].endDate: must not be before startDate'],
    ],
    [
      'malformed ids (short, upper-case UUID, wrong prefix)',
      (d) => {
        d.meritCycles[0].id = 'mc_123';
        d.meritCycles[1].id = 'mc_10000000-0000-4000-8000-00000000000A';
        d.meritCycles[2].id = 'mce_10000000-0000-4000-8000-000000000003';
        d.meritCycles[0].employees[0].id = 'mc_10000000-0000-4000-8000-00000000a001';
      },
      [
        'meritCycles[0].id: must be mc_ followed by a lowercase UUID',
        'meritCycles[0].employees[0].id: must be mce_ followed by a lowercase UUID',
        'meritCycles[1].id: must be mc_ followed by a lowercase UUID',
        'meritCycles[2].id: must be mc_ followed by a lowercase UUID',
      ],
    ],
    [
      'ids repeated within the file',
      (d) => {
        d.meritCycles[1].id = d.meritCycles[0].id;
        d.meritCycles[1].employees[1].id = d.meritCycles[1].employees[0].id;
        d.meritCycles[1].employees[2].id = d.meritCycles[0].employees[0].id;
      },
      [
        'meritCycles[1].employees[1].id: repeats the id of employees[0]',
        'meritCycles[1].id: repeats the id of meritCycles[0]',
        'meritCycles[1].employees[2].id: repeats the id of meritCycles[0].employees[0]: an employee id belongs to one merit cycle',
      ],
    ],
    [
      'dates that are not ISO 8601 date-times',
      (d) => {
        d.meritCycles[0].startDate = '2025-13-01T00:00:00Z';
        d.meritCycles[1].endDate = '2025-01-01';
      },
      [
        'meritCycles[0].startDate: must be an ISO 8601 date-time, e.g. 2025-01-01T00:00:00.000Z',
        'meritCycles[1].endDate: must be an ISO 8601 date-time, e.g. 2025-01-01T00:00:00.000Z',
      ],
    ],
    [
      'a bad organisation slug',
      (d) => {
        d.organization.slug = 'Acme Corp';
      },
      ['organization.slug: must be 1–63 lowercase letters, digits and inner hyphens, e.g. acme'],
    ],
    [
      'names over 200 characters and an email over 254',
      (d) => {
        d.organization.name = 'O'.repeat(201);
        d.meritCycles[0].name = 'C'.repeat(201);
        d.meritCycles[0].employees[0].lastName = longName(201);
        d.meritCycles[0].employees[0].preferredName = 'P'.repeat(201);
        d.meritCycles[0].employees[1].currencyCode = { code: 'GBP', value: 'G'.repeat(201) };
        d.meritCycles[0].employees[1].email = `${'a'.repeat(242)}@acme.example`;
      },
      [
        'organization.name: must be at most 200 characters',
        'meritCycles[0].name: must be at most 200 characters',
        'meritCycles[0].employees[0].lastName: must be at most 200 characters',
        'meritCycles[0].employees[0].preferredName: must be at most 200 characters',
        'meritCycles[0].employees[1].email: must be at most 254 characters',
        'meritCycles[0].employees[1].currencyCode.value: must be at most 200 characters',
      ],
    ],
  ])('reports %s with its JSON path', async (_label, mutate, expected) => {
    expect(await problemsOf(mutate)).toEqual(expected);
  });

  // PostgreSQL refuses a B-tree entry over 2,704 bytes; names are index keys there. Names
  // at the limit, of characters three bytes long in UTF-8 and random (so that PostgreSQL
  // cannot compress the entry), load on both databases and are served back exactly.
  it('stores names of 200 characters and an email of 254, on either database', async () => {
    const dataSet = JSON.parse(JSON.stringify(acmeDataSet())) as Json;
    dataSet.organization.slug = 'long-names';
    const cycle = dataSet.meritCycles[0];
    cycle.id = undefined;
    cycle.name = longName(200);
    const employee = cycle.employees[0];
    employee.id = undefined;
    employee.firstName = longName(200);
    employee.lastName = longName(200);
    employee.email = `${'b'.repeat(241)}@acme.example`;
    dataSet.meritCycles = [{ ...cycle, employees: [employee] }];
    expect((await importDataSet(server.database, dataSet)).employees.created).toBe(1);
    const key = await server.createKey('long-names');
    const cycles = (await (
      await server.request('/v1/compensationPlanning/meritCycles', { key })
    ).json()) as { data: { id: string; name: string }[] };
    expect(cycles.data.map((c) => c.name)).toEqual([cycle.name]);
    const page = (await (
      await server.request(`/v1/compensationPlanning/meritCycles/${cycles.data[0]?.id}/employees`, {
        key,
      })
    ).json()) as { data: { email: string; firstName: string; lastName: string }[] };
    expect(
      page.data.map(({ email, firstName, lastName }) => ({ email, firstName, lastName })),
    ).toEqual([
      { email: employee.email, firstName: employee.firstName, lastName: employee.lastName },
    ]);
  });

  it('reports a composite column part that is not a string at the path of that part', async () => {
    const problems = await problemsOf((d) => {
      d.meritCycles[0].employees[0].columns.employee.value.jobLevel = 5;
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^meritCycles\[0\]\.employees\[0\]\.columns\.employee\.value\.jobLevel: /,
    );
  });

  it('reports an unknown field anywhere in the file, each with its path', async () => {
    const problems = await problemsOf((d) => {
      d.extra = 1;
      d.organization.plan = 'gold';
      d.meritCycles[1].colour = 'blue';
      d.meritCycles[0].employees[2].salary = 100_000;
      d.meritCycles[0].employees[2].columns.department.width = 3;
      d.meritCycles[0].employees[0].currencyCode = { code: 'GBP', name: 'Pound' };
    });
    expect([...problems].sort()).toEqual(
      [
        'extra: is not a field of this format',
        'organization.plan: is not a field of this format',
        'meritCycles[1].colour: is not a field of this format',
        'meritCycles[0].employees[2].salary: is not a field of this format',
        'meritCycles[0].employees[2].columns.department.width: is not a field of this format',
        'meritCycles[0].employees[0].currencyCode.name: is not a field of this format',
      ].sort(),
    );
  });

  it('reports a wrong enum value or a missing required field at its path', async () => {
    const problems = await problemsOf((d) => {
      d.meritCycles[2].status = 'open';
      d.meritCycles[0].employees[1].eligibilityStatus = 'yes';
      delete d.meritCycles[1].employees[0].firstName;
    });
    expect(problems.map((problem) => problem.split(': ')[0])).toEqual([
      'meritCycles[0].employees[1].eligibilityStatus',
      'meritCycles[1].employees[0].firstName',
      'meritCycles[2].status',
    ]);
  });

  it('reports values of the wrong JSON type at their path, also where fields are compared with each other', async () => {
    const problems = await problemsOf((d) => {
      d.meritCycles[0].employees[1].email = 42;
      d.meritCycles[0].employees[2] = null;
      d.meritCycles[1].name = 5;
      d.meritCycles[2].employees = 'none';
      d.meritCycles[3] = null;
    });
    expect(problems).toEqual([
      'meritCycles[0].employees[1].email: must be an email address',
      'meritCycles[0].employees[2]: Invalid input: expected object, received null',
      'meritCycles[1].name: Invalid input: expected string, received number',
      'meritCycles[2].employees: Invalid input: expected array, received string',
      'meritCycles[3]: Invalid input: expected object, received null',
    ]);
  });

  it('reports every bad field of a file at once, and says how many in its message', async () => {
    const dataSet = JSON.parse(JSON.stringify(acmeDataSet())) as Json;
    dataSet.meritCycles[0].employees[1].email = 'grace';
    dataSet.meritCycles[1].employees[3].currencyCode = 'usd';
    expect((await errorOf(dataSet)).message).toBe(
      [
        '2 problems:',
        'meritCycles[0].employees[1].email: must be an email address',
        `meritCycles[1].employees[3].currencyCode: ${NOT_ISO_4217}`,
      ].join('\n'),
    );
  });

  it('caps the report at 50 problems and says how many more there are', async () => {
    const problems = await problemsOf((d) => {
      for (let i = 0; i < 60; i++) {
        d.meritCycles[0][`unknown${i}`] = i;
      }
    });
    expect(problems).toHaveLength(51);
    expect(problems[50]).toBe('… and 10 more');
  });

  it('reports text that is not JSON with its line and column', async () => {
    expect(await problemsOfText('{\n  "organization": 1,\n  x\n}\n')).toEqual([
      expect.stringMatching(/^not valid JSON \(line 3, column 3\): /),
    ]);
    expect(await problemsOfText('{\n  "organization": {"slug": "acme",\n')).toEqual([
      expect.stringMatching(/^not valid JSON \(line 3, column 1\): /),
    ]);
  });

  it('reports a file cut short with the line and column where it ends', async () => {
    expect(await problemsOfText('{\n  "organization":')).toEqual([
      expect.stringMatching(/^not valid JSON \(line 2, column 18\): /),
    ]);
  });

  it('reports JSON that is not an object as a problem of the whole file', async () => {
    expect(await problemsOfText('[]')).toEqual([
      '(the file): must be a JSON object (a data set), not an array',
    ]);
  });
});
