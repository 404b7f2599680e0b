// The worker thread of a file's import (src/import/parallel-intake.ts), run as the command
// line runs it: the compiled modules of dist/ (npm test builds them first), a real worker
// thread. What the import's thread sees: the batches in order, the outcome after the
// last one is written, the flow control that bounds memory, and failures on either side.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type * as ParallelIntake from '../../src/import/parallel-intake.js';
import type { StagedBatch } from '../../src/import/staging.js';

const dist = (module: string) =>
  fileURLToPath(new URL(`../../dist/import/${module}.js`, import.meta.url));
const { IntakeWorker, BATCHES_AHEAD, CHUNKS_AHEAD } = (await import(
  dist('parallel-intake')
)) as typeof ParallelIntake;
const { BATCH_ROWS } = (await import(
  dist('staging')
)) as typeof import('../../src/import/staging.js');
const { DataSetSyntaxError, ImportError } = (await import(
  dist('errors')
)) as typeof import('../../src/import/errors.js');

const CYCLE = 'mc_90000000-0000-4000-8000-000000000001';
const LINES_PER_CHUNK = 100;

const line = (record: unknown) => `${JSON.stringify(record)}\n`;
const employeeLine = (i: number) =>
  line({
    employee: {
      email: `person${i}@example.com`,
      firstName: `First${i}`,
      lastName: 'Last',
      currencyCode: 'EUR',
      eligibilityStatus: 'eligible',
      columns: {},
    },
    meritCycle: CYCLE,
  });
const HEAD =
  line({ organization: { slug: 'threads', name: 'Threads' } }) +
  line({
    meritCycle: {
      id: CYCLE,
      name: 'Cycle',
      status: 'active',
      startDate: '2026-01-01T00:00:00Z',
      endDate: '2026-02-01T00:00:00Z',
      currency: 'EUR',
    },
  });

/** An NDJSON file of `employees` employees, LINES_PER_CHUNK lines a chunk; counts reads. */
function source(employees: number) {
  const state = { read: 0, closed: false, chunks: Math.ceil(employees / LINES_PER_CHUNK) + 1 };
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      state.read++;
      yield Buffer.from(HEAD);
      for (let start = 0; start < employees; start += LINES_PER_CHUNK) {
        let text = '';
        for (let i = start; i < Math.min(employees, start + LINES_PER_CHUNK); i++) {
          text += employeeLine(i);
        }
        state.read++;
        yield Buffer.from(text);
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, bytes: chunks() };
}

const waitUntil = async (check: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('the intake of a file in a worker thread', () => {
  it('hands over every employee in batches, in file order, and the outcome only after the last batch is written', async () => {
    const { bytes, state } = source(2_345);
    const seqs: number[] = [];
    let writing = 0;
    let doneWhileWriting = false;
    const outcome = await new IntakeWorker('a.ndjson', 'postgres')
      .take(bytes, async (batch) => {
        writing++;
        // Written slowly: the outcome must still wait for it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        const rows = JSON.parse((batch as Extract<StagedBatch, { dialect: 'postgres' }>).json);
        expect(rows).toHaveLength(batch.rows);
        seqs.push(...rows.map((row: { seq: number }) => row.seq));
        writing--;
      })
      .finally(() => {
        doneWhileWriting = writing > 0;
      });
    expect(doneWhileWriting).toBe(false);
    expect(seqs).toEqual(Array.from({ length: 2_345 }, (_, i) => i));
    expect(outcome).toMatchObject({
      rootSeen: true,
      recordProblems: 0,
      shapeProblems: [],
      problems: { kept: [], total: 0 },
      cycles: [{ seen: true, listsEmployees: true, employees: 2_345, faulty: false }],
    });
    expect(outcome.root?.organization.slug).toBe('threads');
    expect(state).toMatchObject({ read: state.chunks, closed: true });
  });

  it('started before the database is open, the thread reads nothing of the file until it is taken, then takes all of it', async () => {
    const { bytes, state } = source(1_200);
    const worker = new IntakeWorker('a.ndjson', 'sqlite');
    // Long enough for the thread to start and ask for the file (about 130 ms).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(state.read).toBe(0);
    let rows = 0;
    const outcome = await worker.take(bytes, async (batch) => {
      rows += batch.rows;
    });
    expect(rows).toBe(1_200);
    expect(outcome.cycles[0]?.employees).toBe(1_200);
    expect(state).toMatchObject({ read: state.chunks, closed: true });
  });

  it('a writer that does not finish its first batch holds the worker to BATCHES_AHEAD batches and a few chunks of the file; an abort stops it and closes the file', async () => {
    const { bytes, state } = source(100_000);
    let writes = 0;
    const controller = new AbortController();
    const taking = new IntakeWorker('a.ndjson', 'sqlite').take(
      bytes,
      () => {
        writes++;
        return new Promise<void>(() => undefined);
      },
      controller.signal,
    );
    await waitUntil(() => writes === 1);
    // Time for the worker to read and validate as far as it is let.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(writes).toBe(1);
    // The rows of the batches sent, of the one it is filling, and the chunks asked ahead.
    const bound =
      Math.ceil(((BATCHES_AHEAD + 1) * BATCH_ROWS) / LINES_PER_CHUNK) + 1 + CHUNKS_AHEAD;
    expect(state.read).toBeLessThanOrEqual(bound);
    expect(state.chunks).toBe(1_001);

    const reason = new Error('stop');
    controller.abort(reason);
    await expect(taking).rejects.toBe(reason);
    await waitUntil(() => state.closed);
    expect(state.read).toBeLessThanOrEqual(bound);
  });

  it('a write that fails ends the intake with that error, and the file is closed', async () => {
    const { bytes, state } = source(5_000);
    const failure = new Error('disk full');
    let writes = 0;
    const taking = new IntakeWorker('a.ndjson', 'sqlite').take(bytes, async () => {
      writes++;
      if (writes === 2) throw failure;
    });
    await expect(taking).rejects.toBe(failure);
    await waitUntil(() => state.closed);
    expect(state.read).toBeLessThan(state.chunks);
  });

  it("the file's problems cross as the loader throws them: a syntax error names its line, too many cycles list the problem", async () => {
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(HEAD + employeeLine(0) + employeeLine(1).replace('}}', '}'));
    }
    const syntax = await new IntakeWorker('a.ndjson', 'sqlite')
      .take(broken(), async () => {})
      .catch((error: unknown) => error);
    expect(syntax).toBeInstanceOf(DataSetSyntaxError);
    expect((syntax as Error).message).toMatch(/^line 4 is not valid JSON: /);

    async function* cycles(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(`{"organization":{"slug":"x","name":"X"},"meritCycles":[`);
      for (let i = 0; i <= 10_000; i++) yield Buffer.from(`${i > 0 ? ',' : ''}{"name":"c${i}"}`);
      yield Buffer.from(']}');
    }
    const tooMany = await new IntakeWorker('a.json', 'sqlite')
      .take(cycles(), async () => {})
      .catch((error: unknown) => error);
    expect(tooMany).toBeInstanceOf(ImportError);
    expect((tooMany as InstanceType<typeof ImportError>).problems).toEqual([
      'meritCycles[10000]: a data set holds at most 10,000 merit cycles',
    ]);
  });
});
