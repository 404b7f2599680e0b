// The NDJSON form of a data set (docs/import-format.md, "NDJSON"): the same data set as the
// JSON format, one record a line, validated and loaded by the same code, all or nothing,
// with problems named by line and JSON path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../src/import/errors.js';
import { importDataSet } from '../../src/import/load.js';
import { looksLikeNdjson, parseNdjsonDataSet } from '../../src/import/ndjson.js';
import { parseDataSet } from '../../src/import/parse.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { acmeDataSet, CYCLE, globexDataSet } from '../fixtures/data-sets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dumpTables } from '../helpers/snapshot.js';

/** A data set as NDJSON: organisation, then each cycle followed by its employees. */
function toNdjson(dataSet: DataSetInput): string {
  const lines = [JSON.stringify({ organization: dataSet.organization })];
  for (const { employees, ...cycle } of dataSet.meritCycles) {
    lines.push(JSON.stringify({ meritCycle: cycle }));
    for (const employee of employees ?? []) {
      lines.push(JSON.stringify({ employee, meritCycle: cycle.id ?? cycle.name }));
    }
  }
  return `${lines.join('\n')}\n`;
}

function problemsOf(text: string): readonly string[] {
  try {
    parseNdjsonDataSet(text);
  } catch (error) {
    if (error instanceof ImportError) return error.problems;
    throw error;
  }
  throw new Error('expected an ImportError');
}

describe('NDJSON data sets', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('is recognised by its first line, and a JSON data set is not', () => {
    expect(looksLikeNdjson(toNdjson(acmeDataSet()))).toBe(true);
    expect(looksLikeNdjson(JSON.stringify(acmeDataSet()))).toBe(false);
    expect(looksLikeNdjson(JSON.stringify(acmeDataSet(), null, 2))).toBe(false);
  });

  it('assembles exactly the data set the JSON format gives, and loads it with the same result', async () => {
    const dataSet = acmeDataSet();
    expect(parseNdjsonDataSet(toNdjson(dataSet))).toEqual(parseDataSet(dataSet));
    const summary = await importDataSet(server.database, parseNdjsonDataSet(toNdjson(dataSet)));
    expect(summary.employees.created).toBe(11);
    // Loading the JSON form afterwards changes nothing.
    const again = await importDataSet(server.database, parseDataSet(dataSet));
    expect(again.employees).toEqual({ created: 0, updated: 0, unchanged: 11, removed: 0 });
    expect(again.meritCycles).toEqual({ created: 0, updated: 0, unchanged: 6 });
  });

  it('takes employees in any order after their cycle, by cycle id or name, with CRLF and blank lines', () => {
    const dataSet = acmeDataSet();
    const [first, second] = dataSet.meritCycles;
    if (!first?.employees || !second) throw new Error('fixture changed');
    const { employees, ...cycle } = first;
    const { employees: _none, ...other } = second;
    const text = [
      JSON.stringify({ organization: dataSet.organization }),
      '',
      JSON.stringify({ meritCycle: cycle }),
      JSON.stringify({ meritCycle: { ...other, id: undefined } }),
      ...employees.map((employee, index) =>
        JSON.stringify({ employee, meritCycle: index % 2 ? cycle.id : cycle.name }),
      ),
    ].join('\r\n');
    const parsed = parseNdjsonDataSet(text);
    expect(parsed.meritCycles).toHaveLength(2);
    expect(parsed.meritCycles[0]?.employees?.map((e) => e.email)).toEqual(
      employees.map((e) => e.email),
    );
    // A cycle without employee lines leaves its employees as they are (no `employees`).
    expect(parsed.meritCycles[1]?.employees).toBeUndefined();
  });

  it('names the line and the JSON path of each bad field', () => {
    const dataSet = acmeDataSet();
    const cycle = dataSet.meritCycles[0];
    const employee = cycle?.employees?.[1];
    if (!cycle || !employee) throw new Error('fixture changed');
    employee.email = 'not-an-email';
    cycle.currency = 'XXY';
    // Line 1 organisation, line 2 the cycle, lines 3… its employees: employees[1] is line 4.
    expect(problemsOf(toNdjson(dataSet))).toEqual([
      'line 2: meritCycles[0].currency: must be an ISO 4217 currency code, e.g. USD',
      'line 4: meritCycles[0].employees[1].email: must be an email address',
    ]);
  });

  it('refuses lines that are no record of the format, or name no cycle above them', () => {
    const organization = JSON.stringify({ organization: { slug: 'x', name: 'X' } });
    expect(
      problemsOf(`${organization}\n{"employee": {}, "meritCycle": "nowhere"}\n[1]\n{"other": 1}\n`),
    ).toEqual([
      'line 2: meritCycle: "nowhere" is not the id or name of a meritCycle line above',
      'line 3: must be a JSON object',
      'line 4: must be {"organization": …}, {"meritCycle": …} or {"employee": …, "meritCycle": "<id or name>"}',
    ]);
    expect(() => parseNdjsonDataSet(`${organization}\n{"meritCycle": \n`)).toThrow(
      /^line 2 is not valid JSON/,
    );
  });

  it('is all or nothing: a load that fails at its last cycle, after the first was written, changes nothing', async () => {
    await importDataSet(server.database, parseDataSet(globexDataSet()));
    const before = await dumpTables(server.database.db);
    const dataSet = acmeDataSet();
    const [cycle, ...rest] = dataSet.meritCycles;
    if (!cycle) throw new Error('fixture changed');
    cycle.name = 'Renamed by a file that fails';
    // The last cycle claims another organisation's cycle id: refused while loading.
    const foreign = { ...cycle, id: CYCLE.globex, name: 'Not ours', employees: [] };
    const text = toNdjson({ ...dataSet, meritCycles: [cycle, ...rest, foreign] });
    await expect(importDataSet(server.database, parseNdjsonDataSet(text))).rejects.toThrow(
      /is already used by another organisation/,
    );
    expect(await dumpTables(server.database.db)).toEqual(before);
  });
});
