// `compplan cycles remove ID [--yes]`: the real CLI on a database a server reads. Without
// a terminal to confirm on it removes nothing unless --yes says so; with it, the cycle and
// its employees go in one transaction and the merit cycles delta reports the removal.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ACME,
  ACME_LIST_ORDER,
  acmeDataSet,
  CYCLE,
  GLOBEX,
  globexDataSet,
} from '../fixtures/data-sets.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CYCLES_DELTA = '/v1/compensationPlanning/meritCycles/delta';

describe('compplan cycles remove', () => {
  let server: TestServer;
  let key: string;
  const cli = (args: string[]) =>
    runCli(['cycles', ...args], { env: { DATABASE_URL: server.databaseUrl }, timeoutMs: 30_000 });
  const employeeCount = async () =>
    (
      await server.database.db
        .selectFrom('merit_cycle_employees')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('merit_cycle_id', '=', CYCLE.annual2025)
        .executeTakeFirstOrThrow()
    ).n;

  beforeEach(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()] });
    key = await server.createKey(ACME);
  });
  afterEach(() => server.close());

  it('without --yes and without a terminal: exit 2, nothing removed', async () => {
    const result = await cli(['remove', CYCLE.annual2025]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pass --yes');
    expect(Number(await employeeCount())).toBeGreaterThan(0);
    expect(
      (await server.request(`/v1/compensationPlanning/meritCycles/${CYCLE.annual2025}`, { key }))
        .status,
    ).toBe(200);
  });

  it('with --yes: the cycle and its employees are gone, and the merit cycles delta says so', async () => {
    const before = (await (await server.request(CYCLES_DELTA, { key })).json()) as {
      deltaToken: string;
    };
    const result = await cli(['remove', CYCLE.annual2025, '--yes', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toStrictEqual({
      id: CYCLE.annual2025,
      name: '2025 Annual Merit',
      organization: ACME,
      employees: 3,
    });
    expect(Number(await employeeCount())).toBe(0);
    const delta = await server.request(
      `${CYCLES_DELTA}?deltaToken=${encodeURIComponent(before.deltaToken)}`,
      { key },
    );
    expect(((await delta.json()) as { data: unknown }).data).toStrictEqual([
      { id: CYCLE.annual2025, removed: true },
    ]);
    const again = await cli(['remove', CYCLE.annual2025, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`No merit cycle ${CYCLE.annual2025}`);
  });
});

// `compplan cycles list --org SLUG [--json]`: an organisation's merit cycles and their ids
// (what `compplan import FILE.csv --cycle ID` needs), read from the database.
describe('compplan cycles list', () => {
  let server: TestServer;
  const cli = (args: string[]) =>
    runCli(['cycles', 'list', ...args], {
      env: { DATABASE_URL: server.databaseUrl },
      timeoutMs: 30_000,
    });
  /** Acme's cycles as the data set loaded them (times in UTC), in the API's list order. */
  const acmeCycles = () => {
    const cycles = acmeDataSet().meritCycles;
    return ACME_LIST_ORDER.map((id) => {
      const cycle = cycles.find((c) => c.id === id);
      return {
        id,
        name: cycle?.name,
        status: cycle?.status,
        startDate: new Date(cycle?.startDate ?? '').toISOString(),
        currency: cycle?.currency,
        employees: cycle?.employees?.length ?? 0,
      };
    });
  };

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), globexDataSet()] });
  });
  afterAll(() => server.close());

  it("--json: an array of {id,name,status,startDate,currency,employees}, the organisation's cycles only, in the API's order", async () => {
    const result = await cli(['--org', ACME, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toStrictEqual(acmeCycles());
    const globex = JSON.parse((await cli(['--org', GLOBEX, '--json'])).stdout) as { id: string }[];
    expect(globex.map((cycle) => cycle.id)).toEqual([CYCLE.globex]);
  });

  it('text: a table with a header and one line per cycle', async () => {
    const result = await cli(['--org', ACME]);
    expect(result.code).toBe(0);
    const [header, ...lines] = result.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID +NAME +STATUS +START +CURRENCY +EMPLOYEES$/);
    expect(lines).toHaveLength(ACME_LIST_ORDER.length);
    for (const [index, cycle] of acmeCycles().entries()) {
      const cells = [cycle.id, cycle.name, cycle.status, cycle.startDate, cycle.currency];
      expect(lines[index]).toMatch(
        new RegExp(
          `^${cells.map((cell) => String(cell).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(' +')} +${cycle.employees}$`,
        ),
      );
    }
  });

  it('an unknown organisation: one line, exit 1', async () => {
    expect(await cli(['--org', 'nope'])).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: 'compplan: No organisation with slug "nope"\n',
    });
  });
});
