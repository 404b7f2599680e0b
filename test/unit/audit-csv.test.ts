// The audit log's CSV (compplan audit export): a cell a spreadsheet would run as a formula
// is written as text, with a leading apostrophe; nothing else is changed.
import { describe, expect, it } from 'vitest';
import { spreadsheetSafe } from '../../src/audit/csv.js';

describe('spreadsheetSafe', () => {
  it.each([
    ['=SUM(A1:A9)', "'=SUM(A1:A9)"],
    ['+1 555 0100', "'+1 555 0100"],
    ['-2+3', "'-2+3"],
    ['@cmd', "'@cmd"],
    ['\tTAB', "'\tTAB"],
    ['\rCR', "'\rCR"],
  ])('prefixes %j with an apostrophe', (value, safe) => {
    expect(spreadsheetSafe(value)).toBe(safe);
  });

  it.each([['curl/8.5.0'], [' =not first'], ['a=b'], [''], [200], [null]])(
    'leaves %j as it is',
    (value) => {
      expect(spreadsheetSafe(value)).toBe(value);
    },
  );
});
