// compplan import FILE [--prune] and import - (docs/import-format.md).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeDataSet, CYCLE, globexDataSet } from '../fixtures/data-sets.js';
import {
  dumpDatabase,
  runCli,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';

function summary(
  head: string,
  cycles: [number, number, number],
  employees: [number, number, number, number],
): string {
  return [
    head,
    `  merit cycles: ${cycles[0]} created, ${cycles[1]} updated, ${cycles[2]} unchanged`,
    `  employees:    ${employees[0]} created, ${employees[1]} updated, ${employees[2]} unchanged, ${employees[3]} removed`,
    '',
  ].join('\n');
}

const NOT_IMPORTED = 'compplan: the data set was not imported; nothing changed.\n';

describe('compplan import', () => {
  let db: TempDatabase;
  let acmeFile: string;

  beforeAll(() => {
    db = tempDatabase();
    acmeFile = db.writeFile('acme.json', JSON.stringify(acmeDataSet(), null, 2));
  });
  afterAll(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('loads a file into a new database and prints what it created', async () => {
    const result = await runCli(['import', acmeFile], { env: db.env });
    expect(result).toEqual({
      code: 0,
      signal: null,
      stdout: summary('Imported acme (new organisation):', [6, 0, 0], [11, 0, 0, 0]),
      stderr: '',
    });
  });

  it('re-importing the same file changes nothing in any table and says everything is unchanged', async () => {
    const before = dumpDatabase(db.path);
    const result = await runCli(['import', acmeFile], { env: db.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(summary('Imported acme:', [0, 0, 6], [0, 0, 11, 0]));
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  it('says which fields of a stored organisation it changed, and changes them back', async () => {
    const renamed = acmeDataSet();
    renamed.organization = {
      ...renamed.organization,
      name: 'Acme Holdings',
      apiKeysEnabled: false,
    };
    const file = db.writeFile('acme-renamed.json', JSON.stringify(renamed));
    const changed = summary(
      'Imported acme:\n  organisation: name and apiKeysEnabled updated',
      [0, 0, 6],
      [0, 0, 11, 0],
    );
    const result = await runCli(['import', file], { env: db.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(changed);
    const back = await runCli(['import', acmeFile], { env: db.env });
    expect(back.stdout).toBe(changed);
    const again = await runCli(['import', acmeFile], { env: db.env });
    expect(again.stdout).toBe(summary('Imported acme:', [0, 0, 6], [0, 0, 11, 0]));
  });

  it('import - reads the data set from standard input', async () => {
    const result = await runCli(['import', '-'], {
      env: db.env,
      input: JSON.stringify(globexDataSet()),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      summary('Imported globex (new organisation):', [1, 0, 0], [5, 0, 0, 0]),
    );
  });

  it('keeps employees the file no longer lists, and removes them with --prune', async () => {
    const dataSet = acmeDataSet();
    const cycle = dataSet.meritCycles[0];
    if (!cycle?.employees) throw new Error('fixture changed');
    const dropped = cycle.employees.pop();
    const file = db.writeFile('acme-without-one.json', JSON.stringify(dataSet));

    const before = dumpDatabase(db.path);
    const kept = await runCli(['import', file], { env: db.env });
    expect(kept.stdout).toBe(summary('Imported acme:', [0, 0, 6], [0, 0, 10, 0]));
    expect(dumpDatabase(db.path)).toEqual(before);

    const pruned = await runCli(['import', file, '--prune'], { env: db.env });
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toBe(summary('Imported acme:', [0, 0, 6], [0, 0, 10, 1]));
    const ids = (dumpDatabase(db.path).merit_cycle_employees as { id: string }[]).map(
      (row) => row.id,
    );
    expect(ids).not.toContain(dropped?.id);
    expect(ids).toHaveLength(10 + 5);
  });

  it('refuses a file with bad fields: exit 1, the JSON path of each bad field, nothing changed', async () => {
    const dataSet = acmeDataSet();
    dataSet.organization.name = 'Renamed, but must not be';
    const employees = dataSet.meritCycles[1]?.employees;
    const first = dataSet.meritCycles[0];
    if (!employees?.[3] || !first) throw new Error('fixture changed');
    employees[3].email = 'not-an-email';
    first.currency = 'usd';
    const file = db.writeFile('bad.json', JSON.stringify(dataSet));

    const before = dumpDatabase(db.path);
    const result = await runCli(['import', file], { env: db.env });
    expect(result).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr:
        NOT_IMPORTED +
        'meritCycles[0].currency: must be an ISO 4217 currency code, e.g. USD\n' +
        'meritCycles[1].employees[3].email: must be an email address\n',
    });
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  it('leaves no database behind when a bad file is imported into one that did not exist', async () => {
    const file = db.writeFile(
      'bad-new.ndjson',
      '{"organization":{"slug":"x","name":"X"}}\nnot json\n',
    );
    const csv = db.writeFile('bad-new.csv', 'not,a,cycle\n');
    const fresh = join(db.dir, 'not-yet', 'there', 'new.db');
    for (const args of [
      ['import', file],
      ['import', csv, '--org', 'x', '--cycle', CYCLE.annual2025],
    ]) {
      const result = await runCli(args, { env: { DATABASE_URL: `sqlite:${fresh}` } });
      expect(result.code, result.stderr).toBe(1);
      expect(existsSync(join(db.dir, 'not-yet')), args.join(' ')).toBe(false);
    }
  });

  it('refuses a file that fails while loading (a cycle id of another organisation): exit 1, its path, nothing changed', async () => {
    const dataSet = acmeDataSet();
    const [first, second] = dataSet.meritCycles;
    if (!first || !second) throw new Error('fixture changed');
    first.name = 'Renamed, but must not be';
    second.id = CYCLE.globex;
    const file = db.writeFile('stolen-id.json', JSON.stringify(dataSet));

    const before = dumpDatabase(db.path);
    const result = await runCli(['import', file], { env: db.env });
    expect(result).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: `${NOT_IMPORTED}meritCycles[1].id: ${CYCLE.globex} is already used by another organisation\n`,
    });
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  it('refuses input that is not JSON with exit 1: nothing changed, and the line and column', async () => {
    const before = dumpDatabase(db.path);
    const syntax = db.writeFile('syntax.json', '{\n  "organization": 1,\n  x\n}\n');
    // Cut short: JSON.parse gives no position for the end of the input.
    const truncated = '{\n  "organization":';
    const results = [
      { result: await runCli(['import', syntax], { env: db.env }), where: 'line 3, column 3' },
      {
        result: await runCli(['import', '-'], { env: db.env, input: truncated }),
        where: 'line 2, column 18',
      },
    ];
    for (const { result, where } of results) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        /^compplan: the data set was not imported; nothing changed\.\nnot valid JSON[^\n]*\n$/,
      );
      expect(result.stderr).toContain(where);
    }
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  it('a missing file or a directory exits 1 with a one-line message naming it', async () => {
    const missing = `${db.dir}/no-such-file.json`;
    expect(await runCli(['import', missing], { env: db.env })).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: `compplan: Cannot read ${missing}: no such file\n`,
    });
    expect(await runCli(['import', db.dir], { env: db.env })).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: `compplan: Cannot read ${db.dir}: it is a directory\n`,
    });
  });
  it('loads NDJSON (by the .ndjson name, or by its first line from standard input); problems name the line', async () => {
    const dataSet = acmeDataSet();
    const lines = [JSON.stringify({ organization: dataSet.organization })];
    for (const { employees, ...cycle } of dataSet.meritCycles) {
      lines.push(JSON.stringify({ meritCycle: cycle }));
      for (const employee of employees ?? []) {
        lines.push(JSON.stringify({ employee, meritCycle: cycle.id ?? cycle.name }));
      }
    }
    const file = db.writeFile('acme.ndjson', `${lines.join('\n')}\n`);
    // The same data set as acme.json: once that is loaded, the NDJSON changes nothing.
    expect((await runCli(['import', acmeFile], { env: db.env })).code).toBe(0);
    const before = dumpDatabase(db.path);
    const result = await runCli(['import', file], { env: db.env });
    expect(result).toEqual({
      code: 0,
      signal: null,
      stdout: summary('Imported acme:', [0, 0, 6], [0, 0, 11, 0]),
      stderr: '',
    });
    const piped = await runCli(['import', '-'], { env: db.env, input: lines.join('\n') });
    expect(piped.stdout).toBe(summary('Imported acme:', [0, 0, 6], [0, 0, 11, 0]));
    expect(dumpDatabase(db.path)).toEqual(before);

    const bad = [...lines];
    bad[2] = (bad[2] ?? '').replace('@', ' at ');
    const badFile = db.writeFile('bad.ndjson', bad.join('\n'));
    const refused = await runCli(['import', badFile], { env: db.env });
    expect(refused).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: `${NOT_IMPORTED}line 3: meritCycles[0].employees[0].email: must be an email address\n`,
    });
    expect(dumpDatabase(db.path)).toEqual(before);
  });
});
