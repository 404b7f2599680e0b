// The worker thread of a file's import (src/import/intake-worker.ts), run as the command
// line runs it: the compiled modules of dist/ (npm test builds them first), a real worker
// thread reading a real file. What the import's thread sees: the batches in order, the
// outcome after the last one is written, the flow control that bounds memory, and
// failures on either side. How far the file has been read is its offset, which the
// kernel shows in /proc/self/fdinfo.
import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StagedBatch } from '../../src/import/staging.js';

const dist = (module: string) =>
  fileURLToPath(new URL(`../../dist/import/${module}.js`, import.meta.url));
// dist/'s modules make their own copies of the API's schemas, under the ids src/'s have, in
// the one zod of this process, which later files of this worker share (vitest.config.ts,
// isolate: false): an OpenAPI document built then meets two schemas of one id. The ids
// are given back to src/'s schemas (or to none) once dist/'s are loaded.
const idsOfSchemas = (z.globalRegistry as unknown as { _idmap: Map<string, z.ZodType> })._idmap;
const idsBefore = new Map(idsOfSchemas);
const { IntakeWorker } = (await import(
  dist('intake-worker')
)) as typeof import('../../src/import/intake-worker.js');
const { JSON_MAX_BYTES, openSource } = (await import(
  dist('source')
)) as typeof import('../../src/import/source.js');
const { BATCH_ROWS } = (await import(
  dist('staging')
)) as typeof import('../../src/import/staging.js');
const { ImportError } = (await import(
  dist('errors')
)) as typeof import('../../src/import/errors.js');
idsOfSchemas.clear();
for (const [id, schema] of idsBefore) idsOfSchemas.set(id, schema);

// Batches the worker sends before the first is acknowledged (intake-worker.ts).
const BATCHES_AHEAD = 2;
// What the worker's read stream asks of the file at a time (source.ts).
const CHUNK_BYTES = 64 * 1024;
const CYCLE = 'mc_90000000-0000-4000-8000-000000000001';

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

const dir = mkdtempSync(join(tmpdir(), 'compplan-intake-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;

/** A file of `text`, opened as the command opens it: its handle, its descriptor, its path. */
async function source(name: string, text: string) {
  const path = join(dir, `${files++}-${name}`);
  writeFileSync(path, text);
  const handle = (await openSource(path)) as FileHandle;
  const fd = handle.fd;
  return {
    handle,
    path,
    size: Buffer.byteLength(text),
    /** How far the file has been read (its offset); the worker reads from there. */
    read: () => Number(/^pos:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1]),
    /** Whether the descriptor is still this file's: the thread that holds it is running. */
    open: () => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false;
      }
    },
  };
}

/** An NDJSON data set of `employees` employees of one cycle. */
function ndjson(employees: number): string {
  let text = HEAD;
  for (let i = 0; i < employees; i++) text += employeeLine(i);
  return text;
}

const waitUntil = async (check: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the intake of a file in a worker thread', () => {
  it('hands over every employee in batches, in file order, and the outcome only after the last batch is written', async () => {
    const file = await source('a.ndjson', ndjson(2_345));
    const seqs: number[] = [];
    let writing = 0;
    let doneWhileWriting = false;
    const outcome = await new IntakeWorker('a.ndjson', 'postgres')
      .take(file.handle, async (batch) => {
        writing++;
        // Written slowly: the outcome must still wait for it.
        await sleep(20);
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
      cycles: [{ line: 2, listsEmployees: true, employees: 2_345, faulty: false }],
    });
    expect(outcome.root?.organization.slug).toBe('threads');
    await waitUntil(() => !file.open());
  });

  it('a JSON file by its name, on SQLite: the same employees in the same order', async () => {
    const employees = Array.from({ length: 1_200 }, (_, i) => JSON.parse(employeeLine(i)).employee);
    const text = JSON.stringify({
      organization: { slug: 'threads', name: 'Threads' },
      meritCycles: [{ ...JSON.parse(HEAD.split('\n')[1] as string).meritCycle, employees }],
    });
    const file = await source('a.json', text);
    const emails: unknown[] = [];
    const outcome = await new IntakeWorker('a.json', 'sqlite').take(file.handle, async (batch) => {
      const { values } = batch as Extract<StagedBatch, { dialect: 'sqlite' }>;
      // 17 values a row (staging.ts); the email is the seventh.
      for (let row = 0; row < batch.rows; row++) emails.push(values[row * 17 + 6]);
    });
    expect(emails).toEqual(employees.map((employee) => employee.email));
    expect(outcome.cycles[0]).toMatchObject({ listsEmployees: true, employees: 1_200 });
  });

  it(`a writer that does not finish its first batch holds the worker to ${BATCHES_AHEAD} batches ahead; each write lets it read one more`, async () => {
    const file = await source('a.ndjson', ndjson(100_000));
    const lineBytes = Buffer.byteLength(employeeLine(99_999));
    const release: (() => void)[] = [];
    const controller = new AbortController();
    const taking = new IntakeWorker('a.ndjson', 'sqlite').take(
      file.handle,
      () => new Promise<void>((resolve) => release.push(resolve)),
      controller.signal,
    );
    await waitUntil(() => release.length === 1);
    // Time for the worker to read and validate as far as it is let (the whole file takes
    // a few seconds).
    await sleep(1_000);
    expect(release).toHaveLength(1);
    // The batches sent, the one it is filling, and the chunks its read stream holds.
    const bound = (n: number) =>
      HEAD.length + (n + BATCHES_AHEAD + 1) * BATCH_ROWS * lineBytes + 2 * CHUNK_BYTES;
    const held = file.read();
    expect(held).toBeGreaterThan(BATCHES_AHEAD * BATCH_ROWS * lineBytes);
    expect(held).toBeLessThanOrEqual(bound(0));
    expect(held).toBeLessThan(file.size / 10);
    // Each batch written lets one more be sent: the reading moves on, as far again.
    for (let written = 1; written <= 3; written++) {
      release.shift()?.();
      await waitUntil(() => release.length === 1);
      await sleep(300);
      expect(file.read()).toBeLessThanOrEqual(bound(written));
    }
    expect(file.read()).toBeGreaterThan(held);
    controller.abort(new Error('stop'));
    await expect(taking).rejects.toThrow('stop');
  });

  it('an abort rejects with its reason and stops the thread: the file is read no further, and closed', async () => {
    const file = await source('a.ndjson', ndjson(100_000));
    const controller = new AbortController();
    let writes = 0;
    const taking = new IntakeWorker('a.ndjson', 'sqlite').take(
      file.handle,
      async () => {
        writes++;
        await sleep(5);
      },
      controller.signal,
    );
    await waitUntil(() => writes >= 3);
    const reason = new Error('interrupted');
    controller.abort(reason);
    await expect(taking).rejects.toBe(reason);
    await waitUntil(() => !file.open());
    const stopped = writes;
    await sleep(300);
    // At most the batches already sent may still arrive.
    expect(writes).toBeLessThanOrEqual(stopped + BATCHES_AHEAD);
    expect(stopped).toBeLessThan(100_000 / BATCH_ROWS);
  });

  it('an abort before the intake starts rejects at once and reads nothing', async () => {
    const file = await source('a.ndjson', ndjson(10));
    const reason = new Error('too late');
    let writes = 0;
    await expect(
      new IntakeWorker('a.ndjson', 'sqlite').take(
        file.handle,
        async () => {
          writes++;
        },
        AbortSignal.abort(reason),
      ),
    ).rejects.toBe(reason);
    expect(writes).toBe(0);
    expect(file.read()).toBe(0);
    await file.handle.close();
  });

  it('a write that fails ends the intake with that error, and the thread stops', async () => {
    const file = await source('a.ndjson', ndjson(50_000));
    const failure = new Error('disk full');
    let writes = 0;
    const taking = new IntakeWorker('a.ndjson', 'sqlite').take(file.handle, async () => {
      writes++;
      if (writes === 2) throw failure;
    });
    await expect(taking).rejects.toBe(failure);
    await waitUntil(() => !file.open());
    expect(writes).toBeLessThanOrEqual(2 + BATCHES_AHEAD);
  });

  it("the file's problems cross as ImportErrors, with their problems and total: an NDJSON syntax error names its line; too many cycles; a JSON file over its limit", async () => {
    const broken = await source(
      'a.ndjson',
      HEAD + employeeLine(0) + employeeLine(1).replace('}}', '}'),
    );
    const syntax = await new IntakeWorker('a.ndjson', 'sqlite')
      .take(broken.handle, async () => {})
      .catch((error: unknown) => error);
    expect(syntax).toBeInstanceOf(ImportError);
    const { problems, total, lines } = syntax as InstanceType<typeof ImportError>;
    expect(total).toBe(1);
    expect(problems).toEqual([
      { path: [], message: expect.stringMatching(/^line 4 is not valid JSON: /) },
    ]);
    expect(lines).toEqual([problems[0]?.message]);

    const cycles = Array.from({ length: 10_001 }, (_, i) => ({ name: `c${i}` }));
    const many = await source(
      'many.json',
      JSON.stringify({ organization: { slug: 'x', name: 'X' }, meritCycles: cycles }),
    );
    const tooMany = await new IntakeWorker('many.json', 'sqlite')
      .take(many.handle, async () => {})
      .catch((error: unknown) => error);
    expect(tooMany).toBeInstanceOf(ImportError);
    expect(tooMany).toMatchObject({
      problems: [
        { path: [], message: 'meritCycles[10000]: a data set holds at most 10,000 merit cycles' },
      ],
      total: 1,
    });

    const large = await source('large.json', ' '.repeat(JSON_MAX_BYTES + 1));
    const tooLarge = await new IntakeWorker('large.json', 'sqlite')
      .take(large.handle, async () => {})
      .catch((error: unknown) => error);
    expect(tooLarge).toBeInstanceOf(ImportError);
    expect((tooLarge as Error).message).toMatch(
      new RegExp(
        `^the file is larger than ${JSON_MAX_BYTES / 2 ** 20} MiB, the limit for a JSON data set`,
      ),
    );
  });
});
