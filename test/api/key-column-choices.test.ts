// The columns a key may hide (docs/api-keys.md, "Least privilege"), on the demo data: the
// organisation's columns grouped by type (what Settings → Connections offers to pick), and a
// hidden column key the data does not have refused with the nearest known keys, their names
// and types — issue #44: `salary, bonus`, as the web form's placeholder suggested, made a
// key "hiding" two columns nobody has while basePay and annualBonusCash were served. Nothing
// is made for a refused key. Runs on every database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnChoicesOf, createApiKey, KeyManagementError } from '../../src/api-keys/service.js';
import { demoDataSet } from '../../src/demo/data-set.js';
import { DEMO_ORGANIZATION } from '../../src/demo/organization.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const UNKNOWN_HINT = 'To hide a column of data still to come, add --allow-unknown-columns.';
const column = (key: string, name: string, type: string) => ({ key, name, type, parts: null });

describe('the columns a key may hide (demo data)', () => {
  let server: TestServer;
  const keyCount = async () =>
    (await server.database.db.selectFrom('api_keys').select('id').execute()).length;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [demoDataSet()] });
  }, 120_000);
  afterAll(() => server?.close());

  it("columnChoicesOf: the organisation's columns grouped by type, the six in their documented order", async () => {
    expect(await columnChoicesOf(server.database.db, DEMO_ORGANIZATION)).toEqual([
      {
        type: 'text',
        columns: [column('country', 'Country', 'text'), column('department', 'Department', 'text')],
      },
      {
        type: 'number',
        columns: [
          column('currentCompaRatio', 'Current Compa Ratio', 'number'),
          column('currentRangePenetration', 'Current Range Penetration', 'number'),
        ],
      },
      { type: 'date', columns: [column('lastPromotionDate', 'Last Promotion Date', 'date')] },
      { type: 'boolean', columns: [column('isPeopleManager', 'People Manager', 'boolean')] },
      {
        type: 'currency',
        columns: [
          column('annualBonusCash', 'Annual Bonus Cash', 'currency'),
          column('basePay', 'Base Pay', 'currency'),
          column('compBandMaxBasePay', 'Comp Band Max Base Pay', 'currency'),
          column('compBandMinBasePay', 'Comp Band Min Base Pay', 'currency'),
          column('compBandTargetBasePay', 'Comp Band Target Base Pay', 'currency'),
        ],
      },
      {
        type: 'composite',
        columns: [
          {
            ...column('employee', 'Employee', 'composite'),
            parts: ['fullName', 'jobLevel', 'jobTitle'].map((key) => ({ key, type: 'text' })),
          },
        ],
      },
    ]);
    await expect(columnChoicesOf(server.database.db, 'nobody')).rejects.toThrow(
      new KeyManagementError('No organisation with slug "nobody"'),
    );
  });

  it.each([
    [
      'salary, bonus (the web form’s old placeholder)',
      ['salary', 'bonus'],
      `--hide-columns: no column salary; did you mean basePay (Base Pay, currency)? Also, no column bonus; did you mean annualBonusCash (Annual Bonus Cash, currency)? ${UNKNOWN_HINT}`,
    ],
    [
      'a key in the wrong case',
      ['basepay'],
      `--hide-columns: no column basepay; did you mean basePay (Base Pay, currency)? ${UNKNOWN_HINT}`,
    ],
    [
      'a display name for a key',
      ['Current Compa Ratio'],
      `--hide-columns: no column Current Compa Ratio; did you mean currentCompaRatio (Current Compa Ratio, number)? ${UNKNOWN_HINT}`,
    ],
    [
      'a typo',
      ['anualBonusCash'],
      `--hide-columns: no column anualBonusCash; did you mean annualBonusCash (Annual Bonus Cash, currency)? ${UNKNOWN_HINT}`,
    ],
    [
      'nothing near: the currency and number columns, the likely intent',
      ['xyzzy'],
      `--hide-columns: no column xyzzy; demo's currency and number columns are annualBonusCash (Annual Bonus Cash, currency), basePay (Base Pay, currency), compBandMaxBasePay (Comp Band Max Base Pay, currency), compBandMinBasePay (Comp Band Min Base Pay, currency), compBandTargetBasePay (Comp Band Target Base Pay, currency), currentCompaRatio (Current Compa Ratio, number) or currentRangePenetration (Current Range Penetration, number). ${UNKNOWN_HINT}`,
    ],
    [
      'a known key given twice',
      ['basePay', 'basePay'],
      '--hide-columns names basePay twice: give each column once',
    ],
    ['an empty key', ['basePay', ' '], '--hide-columns has an empty column key'],
  ])('refuses %s, naming what it might mean; makes nothing', async (_, hiddenColumns, message) => {
    const before = await keyCount();
    await expect(
      createApiKey(server.database.db, { org: DEMO_ORGANIZATION, hiddenColumns }),
    ).rejects.toThrow(new KeyManagementError(message));
    expect(await keyCount()).toBe(before);
  });

  it('makes a key hiding known columns, and one hiding columns of data still to come when asked to', async () => {
    const known = await createApiKey(server.database.db, {
      org: DEMO_ORGANIZATION,
      hiddenColumns: ['basePay', 'annualBonusCash'],
    });
    expect(known.hiddenColumns).toEqual(['annualBonusCash', 'basePay']);
    const toCome = await createApiKey(server.database.db, {
      org: DEMO_ORGANIZATION,
      hiddenColumns: ['salary', 'basePay'],
      allowUnknownColumns: true,
    });
    expect(toCome.hiddenColumns).toEqual(['basePay', 'salary']);
  });
});
