// The embedded database's page size (src/db/connect.ts, SQLITE_PAGE_BYTES; docs/operations.md,
// "SQLite's page size"): a database the command line creates has 16 KiB pages, so that an
// employee's stored text, about 1 KB with typed columns and here 3 KB, lies in its page
// of the employees table; with SQLite's default 4 KiB pages each one spilled into an
// overflow page of its own. The flat CSV line the import keeps beside a text
// (src/export/flat-line.ts) is kept only while the row still fits: a 1 KB employee has
// one, a 3 KB employee none.
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeDataSet } from '../fixtures/data-sets.js';
import { runCli, stopAllProcesses, type TempDatabase, tempDatabase } from '../helpers/cli.js';

const EMPLOYEES = 200;

/** Acme's data set with one cycle of EMPLOYEES employees, of about 3 KB and 1 KB in turn. */
function wideEmployees() {
  const dataSet = acmeDataSet();
  const [cycle] = dataSet.meritCycles;
  if (!cycle) throw new Error('acme has a merit cycle');
  cycle.employees = Array.from({ length: EMPLOYEES }, (_, i) => ({
    id: `mce_70000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    email: `wide${i}@acme.example`,
    firstName: `Wide${i}`,
    lastName: 'Employee',
    currencyCode: 'USD',
    eligibilityStatus: 'eligible' as const,
    columns: {
      notes: {
        name: 'Notes',
        type: 'text',
        value: `${i} ${'compensation note '.repeat(i % 2 ? 40 : 150)}`,
      },
    },
  }));
  dataSet.meritCycles = [cycle];
  return dataSet;
}

describe('a SQLite database the command line creates', () => {
  let db: TempDatabase;

  beforeAll(async () => {
    db = tempDatabase();
    const file = db.writeFile('wide.json', JSON.stringify(wideEmployees()));
    const result = await runCli(['import', file], { env: db.env });
    expect(result.code, result.stderr).toBe(0);
  });
  afterAll(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('has 16 KiB pages, and keeps each employee of 3 KB in its page, none in an overflow page; a flat line only beside a 1 KB one', () => {
    const sqlite = new SQLite(db.path, { readonly: true, fileMustExist: true });
    try {
      expect(sqlite.pragma('page_size', { simple: true })).toBe(16_384);
      const sizes = sqlite
        .prepare(
          `select length(body) > 2800 as wide, min(length(body)) as smallest, count(*) as count,
                  count(flat_line) as lines
             from merit_cycle_employees where email like 'wide%' group by 1 order by 1`,
        )
        .all() as { wide: number; smallest: number; count: number; lines: number }[];
      expect(sizes).toEqual([
        { wide: 0, smallest: expect.any(Number), count: EMPLOYEES / 2, lines: EMPLOYEES / 2 },
        { wide: 1, smallest: expect.any(Number), count: EMPLOYEES / 2, lines: 0 },
      ]);
      expect(sizes[0]?.smallest).toBeGreaterThan(700);
      expect(sizes[1]?.smallest).toBeGreaterThan(2_800);
      const pages = sqlite
        .prepare(
          `select pagetype, count(*) as count from dbstat
            where name = 'merit_cycle_employees' group by pagetype`,
        )
        .all() as { pagetype: string; count: number }[];
      expect(pages.map((page) => page.pagetype)).toContain('leaf');
      expect(pages.filter((page) => page.pagetype === 'overflow')).toEqual([]);
    } finally {
      sqlite.close();
    }
  });
});
