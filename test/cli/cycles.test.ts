// `compplan cycles remove ID [--yes]`: the real CLI on a database a server reads. Without
// a terminal to confirm on it removes nothing unless --yes says so; with it, the cycle and
// its employees go in one transaction and the merit cycles delta reports the removal.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
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
