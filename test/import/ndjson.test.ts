// The NDJSON form of a data set (docs/import-format.md, "NDJSON"): the same data set as the
// JSON format, one record a line, validated and loaded by the same code, all or nothing,
// with problems named by line and JSON path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../src/import/errors.js';
import { importDataSet, importRecords } from '../../src/import/load.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { recordsOfStream } from '../../src/import/source.js';
import { ACME, acmeDataSet, CYCLE, globexDataSet } from '../fixtures/data-sets.js';
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

/** The UTF-8 bytes of a file as a stream, in chunks of `size` bytes. */
async function* chunksOf(text: string, size = 64): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('NDJSON data sets', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  /** Imports the text as `compplan import NAME` reads it. */
  async function importText(text: string, name = 'data-set.ndjson', options = {}) {
    return importRecords(server.database, await recordsOfStream(name, chunksOf(text)), options);
  }

  async function problemsOf(text: string, name?: string): Promise<readonly string[]> {
    const error = await importText(text, name).catch((caught: unknown) => caught);
    if (error instanceof ImportError) return error.lines;
    if (error instanceof Error) throw error;
    throw new Error('expected an ImportError');
  }

  it('is recognised by its first line whatever the file is called, and a JSON data set (compact or pretty) is not', async () => {
    // A bad email: NDJSON names its line, JSON only its path.
    const dataSet = acmeDataSet();
    const employee = dataSet.meritCycles[0]?.employees?.[1];
    if (!employee) throw new Error('fixture changed');
    employee.email = 'not-an-email';
    const ndjsonProblem = 'line 4: meritCycles[0].employees[1].email: must be an email address';
    const jsonProblem = 'meritCycles[0].employees[1].email: must be an email address';
    for (const name of ['data-set.txt', 'stdin']) {
      expect(await problemsOf(toNdjson(dataSet), name)).toEqual([ndjsonProblem]);
      expect(await problemsOf(JSON.stringify(dataSet), name)).toEqual([jsonProblem]);
      expect(await problemsOf(JSON.stringify(dataSet, null, 2), name)).toEqual([jsonProblem]);
    }
  });

  it('loads the data set the JSON format gives: importing the JSON form afterwards changes nothing', async () => {
    const dataSet = acmeDataSet();
    expect(await importText(toNdjson(dataSet))).toEqual({
      organization: { slug: ACME, created: true, changed: [] },
      meritCycles: { created: 6, updated: 0, unchanged: 0 },
      employees: { created: 11, updated: 0, unchanged: 0, removed: 0 },
    });
    // Loading the JSON form afterwards changes nothing.
    const again = await importDataSet(server.database, dataSet);
    expect(again.employees).toEqual({ created: 0, updated: 0, unchanged: 11, removed: 0 });
    expect(again.meritCycles).toEqual({ created: 0, updated: 0, unchanged: 6 });
  });

  it('takes employees in any order after their cycle, by cycle id or name, with CRLF and blank lines', async () => {
    const dataSet = acmeDataSet();
    await server.load(dataSet);
    const [first, second] = dataSet.meritCycles;
    if (!first?.employees || !second?.employees) throw new Error('fixture changed');
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
    // With --prune: a cycle given employees loses those it does not list.
    expect(await importText(text, 'data-set.ndjson', { prune: true })).toEqual({
      organization: { slug: ACME, created: false, changed: [] },
      meritCycles: { created: 0, updated: 0, unchanged: 2 },
      employees: { created: 0, updated: 0, unchanged: employees.length, removed: 0 },
    });
    const emailsOf = async (id: string | undefined) =>
      (
        await server.database.db
          .selectFrom('merit_cycle_employees')
          .select('email')
          .where('merit_cycle_id', '=', id ?? '')
          .execute()
      )
        .map((row) => row.email)
        .sort();
    expect(await emailsOf(cycle.id)).toEqual(employees.map((e) => e.email).sort());
    // A cycle without employee lines leaves its employees as they are, even with --prune.
    expect(await emailsOf(other.id)).toEqual(second.employees.map((e) => e.email).sort());
  });

  it('names the line and the JSON path of each bad field', async () => {
    const dataSet = acmeDataSet();
    const cycle = dataSet.meritCycles[0];
    const employee = cycle?.employees?.[1];
    if (!cycle || !employee) throw new Error('fixture changed');
    employee.email = 'not-an-email';
    cycle.currency = 'XXY';
    // Line 1 organisation, line 2 the cycle, lines 3… its employees: employees[1] is line 4.
    expect(await problemsOf(toNdjson(dataSet))).toEqual([
      'line 2: meritCycles[0].currency: must be an ISO 4217 currency code, e.g. USD',
      'line 4: meritCycles[0].employees[1].email: must be an email address',
    ]);
  });

  it('refuses lines that are no record of the format, or name no cycle above them', async () => {
    const organization = JSON.stringify({ organization: { slug: 'x', name: 'X' } });
    expect(
      await problemsOf(
        `${organization}\n{"employee": {}, "meritCycle": "nowhere"}\n[1]\n{"other": 1}\n`,
      ),
    ).toEqual([
      'line 2: meritCycle: "nowhere" is not the id or name of a meritCycle line above',
      'line 3: must be a JSON object',
      'line 4: must be {"organization": …}, {"meritCycle": …} or {"employee": …, "meritCycle": "<id or name>"}',
    ]);
    await expect(importText(`${organization}\n{"meritCycle": \n`)).rejects.toThrow(
      /^line 2 is not valid JSON/,
    );
  });

  it('is all or nothing: a load that fails at its last cycle, after the first was written, changes nothing', async () => {
    await server.load(globexDataSet());
    const before = await dumpTables(server.database.db);
    const dataSet = acmeDataSet();
    const [cycle, ...rest] = dataSet.meritCycles;
    if (!cycle) throw new Error('fixture changed');
    cycle.name = 'Renamed by a file that fails';
    // The last cycle claims another organisation's cycle id: refused while loading.
    const foreign = { ...cycle, id: CYCLE.globex, name: 'Not ours', employees: [] };
    const text = toNdjson({ ...dataSet, meritCycles: [cycle, ...rest, foreign] });
    await expect(importText(text)).rejects.toThrow(/is already used by another organisation/);
    expect(await dumpTables(server.database.db)).toEqual(before);
  });
});
