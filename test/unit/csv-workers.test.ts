// The bulk download's conversion threads (src/modules/bulk/csv-worker.ts): a thread
// started for a download ends once it has had no work for a while, giving its memory
// back, and the next download's chunk starts one again.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { EMPLOYEE_COLUMNS, OTHER_COLUMNS } from '../../src/export/csv.js';
import { CsvWorkers, csvOfTexts } from '../../src/modules/bulk/csv-worker.js';

const IDLE_MS = 150;

const employee = (id: string) => ({
  id,
  email: `${id}@example.com`,
  firstName: 'Ada',
  lastName: id,
  preferredName: null,
  currencyCode: { code: 'EUR', value: 'Euro' },
  eligibilityStatus: 'eligible',
  columns: {},
});

const chunk = (ids: string[]) => ({
  texts: Buffer.from(ids.map((id) => JSON.stringify(employee(id))).join('\u001e')),
  separator: 0x1e,
  rows: {
    shape: 'nested' as const,
    header: [...EMPLOYEE_COLUMNS, OTHER_COLUMNS],
    hidden: { keys: [], types: [], parts: [] },
  },
});

/** The rows the thread must answer: the conversion made here. */
const rowsOf = (ids: string[]) => csvOfTexts(chunk(ids)).toString();

describe('the CSV conversion threads', () => {
  let workers: CsvWorkers | undefined;
  afterEach(() => workers?.close());

  it('ends a thread idle for longer than its idle time, and starts one again for the next chunk', async () => {
    workers = new CsvWorkers(1, IDLE_MS);
    expect(workers.running).toBe(0);
    const first = await workers.convert(chunk(['a', 'b']));
    expect(first.toString()).toBe(rowsOf(['a', 'b']));
    expect(first.toString().split('\r\n')).toHaveLength(3);
    expect(workers.running).toBe(1);
    // Work within the idle time keeps the thread.
    await sleep(IDLE_MS / 2);
    await workers.convert(chunk(['c']));
    await sleep(IDLE_MS / 2);
    expect(workers.running).toBe(1);
    await sleep(IDLE_MS * 2);
    expect(workers.running).toBe(0);
    const again = await workers.convert(chunk(['d']));
    expect(again.toString()).toBe(rowsOf(['d']));
    expect(workers.running).toBe(1);
  });
});
