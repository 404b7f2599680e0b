// The demo data set (`npm start`, `compplan demo`) as the API serves it: every cycle has the
// compensation columns with the vendor's default keys and their types, and the figures
// agree with each other — bands in order, compa-ratio = base pay / band target, range
// penetration = where base pay sits in the band, amounts in the cycle's currency — with
// some nulls. Loaded by the import, as `compplan demo` loads it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDataSet } from '../../src/demo/data-set.js';
import { DEMO_ORGANIZATION } from '../../src/demo/organization.js';
import { columnsPath, employeesPath, MERIT_CYCLES } from '../helpers/api-expectations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { listAll } from '../helpers/snapshot.js';

const COLUMNS = [
  ['annualBonusCash', 'currency'],
  ['basePay', 'currency'],
  ['compBandMaxBasePay', 'currency'],
  ['compBandMinBasePay', 'currency'],
  ['compBandTargetBasePay', 'currency'],
  ['country', 'text'],
  ['currentCompaRatio', 'number'],
  ['currentRangePenetration', 'number'],
  ['department', 'text'],
  ['employee', 'composite'],
  ['isPeopleManager', 'boolean'],
  ['lastPromotionDate', 'date'],
];

type Value = { name: string; type: string; value: unknown };
interface Served {
  id: string;
  columns: Record<string, Value>;
}

describe('the demo data set', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [demoDataSet()] });
    key = await server.createKey(DEMO_ORGANIZATION);
  });
  afterAll(() => server.close());

  it('describes the same compensation columns in every cycle: currency amounts, numbers, text, the employee composite, a date and a boolean', async () => {
    const cycles = (await listAll(server, key, MERIT_CYCLES)) as { id: string }[];
    expect(cycles).toHaveLength(6);
    for (const { id } of cycles) {
      const response = await server.request(columnsPath(id), { key });
      const { data } = (await response.json()) as {
        data: { key: string; type: string; parts: { key: string }[] | null }[];
      };
      expect(data.map((column) => [column.key, column.type])).toEqual(COLUMNS);
      expect(data.find((column) => column.key === 'employee')?.parts).toEqual([
        { key: 'fullName', type: 'text' },
        { key: 'jobLevel', type: 'text' },
        { key: 'jobTitle', type: 'text' },
      ]);
    }
  });

  it('has figures that agree with each other in every cycle, amounts in the cycle’s currency, and some nulls', async () => {
    const cycles = (await listAll(server, key, MERIT_CYCLES)) as { id: string }[];
    let employees = 0;
    const nulls = new Set<string>();
    for (const { id } of cycles) {
      const rates = (await (
        await server.request(`${MERIT_CYCLES}/${id}/exchangeRates`, { key })
      ).json()) as {
        base: string;
      };
      const amount = (column: Value | undefined): number => {
        const value = column?.value as Record<string, string>;
        expect(Object.keys(value)).toEqual([rates.base]);
        return Number(value[rates.base]);
      };
      for (const { columns } of (await listAll(server, key, employeesPath(id))) as Served[]) {
        employees++;
        expect(Object.keys(columns).sort()).toEqual(COLUMNS.map(([key]) => key));
        for (const [name, column] of Object.entries(columns)) {
          if (column.value === null) nulls.add(name);
        }
        const base = amount(columns.basePay);
        const [min, target, max] = [
          columns.compBandMinBasePay,
          columns.compBandTargetBasePay,
          columns.compBandMaxBasePay,
        ].map(amount) as [number, number, number];
        expect(min).toBeLessThanOrEqual(target);
        expect(target).toBeLessThanOrEqual(max);
        expect(Number(columns.currentCompaRatio?.value)).toBeCloseTo(base / target, 4);
        expect(Number(columns.currentRangePenetration?.value)).toBeCloseTo(
          (base - min) / (max - min),
          4,
        );
        if (columns.annualBonusCash?.value !== null) {
          expect(amount(columns.annualBonusCash)).toBeLessThan(base * 0.25);
        }
        const employee = columns.employee?.value as { jobTitle: string };
        expect(columns.isPeopleManager?.value).toBe(/Manager|Lead/.test(employee.jobTitle));
      }
    }
    expect(employees).toBe(1170);
    expect([...nulls].sort()).toEqual(['annualBonusCash', 'lastPromotionDate']);
  });
});
