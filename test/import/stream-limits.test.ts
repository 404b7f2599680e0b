// The limits of reading a data set (docs/import-format.md, "Limits"): a JSON file is read
// whole, so it may be at most JSON_MAX_BYTES; an NDJSON line may be at most 1 MiB; both counted
// in bytes as they are read, so that endless or huge input ends with a message instead of
// filling memory (and the import's transaction). Text must be UTF-8; an empty file says
// so; a file that is no JSON object says what it is instead; a CSV file may be at most
// 4 MiB and 50,000 rows. Each case is read as `compplan import` reads it, and changes
// nothing.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CSV_MAX_BYTES,
  CSV_MAX_ROWS,
  employeesFromCsv,
  parseCsvRecords,
} from '../../src/import/csv.js';
import { fileProblem, ImportError } from '../../src/import/errors.js';
import { MAX_MERIT_CYCLES } from '../../src/import/intake.js';
import { importRecords } from '../../src/import/load.js';
import { MAX_LINE_BYTES } from '../../src/import/ndjson.js';
import type { ImportRecord } from '../../src/import/records.js';
import { SheetProblemsError } from '../../src/import/sheet-problems.js';
import { JSON_MAX_BYTES, readCsvText, recordsOfStream } from '../../src/import/source.js';
import { acmeDataSet } from '../fixtures/data-sets.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dumpTables } from '../helpers/snapshot.js';

/** A cycle with no columns yet: every column of a file is new. */
const NO_SCHEMA = { columns: [], currency: 'USD' };

const KIB_64 = 64 * 1024;
/** Where endless input stops in these tests: far past any limit, so a reader that does not
 * stop at its limit ends with another message (or reads it all) instead of hanging. */
const ENDLESS_STOP = 96 * 1024 * 1024;
const PREFIX =
  '{"organization": {"slug": "acme", "name": "Acme"}, "meritCycles": [{"name": "c", "employees": [';
/** JSON_MAX_BYTES as the messages say it: `24 MiB`. */
const JSON_LIMIT = `${JSON_MAX_BYTES / 2 ** 20} MiB`;
const JSON_TOO_LARGE = `the file is larger than ${JSON_LIMIT}, the limit for a JSON data set, which is read whole; give a larger data set as NDJSON, which is read line by line (docs/import-format.md)`;
const NOT_IMPORTED = 'compplan: the data set was not imported; nothing changed.\n';

/** What a stream gave its reader, in bytes. */
interface Counter {
  read: number;
}

/** `first`, then `filler` again and again up to ENDLESS_STOP, as /dev/zero would be. */
async function* endless(
  first: string,
  filler: string,
  counter: Counter,
): AsyncGenerator<Uint8Array> {
  const [head, more] = [Buffer.from(first), Buffer.from(filler)];
  counter.read += head.length;
  yield head;
  while (counter.read < ENDLESS_STOP) {
    counter.read += more.length;
    yield more;
  }
}

/** The text's UTF-8 bytes in chunks of `size`, as a file is read. */
async function* chunksOf(text: string, size = KIB_64): AsyncGenerator<Uint8Array> {
  yield* bytesOf(Buffer.from(text), size);
}

/** Bytes in chunks of `size`. */
async function* bytesOf(bytes: Uint8Array, size = KIB_64): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect<T>(items: AsyncIterable<T> | Iterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** The records of a stream, as `compplan import NAME` reads them. */
async function recordsOf(name: string, chunks: AsyncIterable<Uint8Array>): Promise<ImportRecord[]> {
  return collect(await recordsOfStream(name, chunks));
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error)) throw new Error('expected the promise to fail');
  return outcome;
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const byteLength = (text: string) => Buffer.byteLength(text);
const concat = (...parts: (Uint8Array | number[])[]) =>
  Uint8Array.from(parts.flatMap((part) => Array.from(part)));

describe('limits of reading a data set', () => {
  const dir = mkdtempSync(join(tmpdir(), 'compplan-limits-'));
  let database: TestDatabase;
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startTestServer({ database: database.config, dataSets: [acmeDataSet()] });
    const { config } = database;
    env = {
      LOG_LEVEL: 'silent',
      DATABASE_URL: config.dialect === 'sqlite' ? `sqlite:${config.path}` : config.url,
    };
  });
  afterAll(async () => {
    await server.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Imports a stream as `compplan import NAME` reads it; what failed, and nothing changed. */
  async function importFailure(name: string, chunks: AsyncIterable<Uint8Array>): Promise<Error> {
    const before = await dumpTables(server.database.db);
    const error = await failure(
      (async () => importRecords(server.database, await recordsOfStream(name, chunks)))(),
    );
    expect(await dumpTables(server.database.db)).toEqual(before);
    return error;
  }

  async function problemsOf(name: string, text: string): Promise<readonly string[]> {
    const error = await importFailure(name, chunksOf(text));
    if (!(error instanceof ImportError)) throw error;
    return error.lines;
  }

  /** `compplan import ARGS…` (the real command line): exit 1, nothing changed, its message. */
  async function cliFailure(args: string[]): Promise<string> {
    const before = await dumpTables(server.database.db);
    const result = await runCli(['import', ...args], { env, timeoutMs: 30_000 });
    expect(result).toMatchObject({ code: 1, signal: null, stdout: '' });
    // One message, from compplan, with nothing a terminal would act on.
    expect(result.stderr).toMatch(/^compplan: /);
    expect(controlCharacters(result.stderr.slice(0, -1))).toEqual([]);
    expect(await dumpTables(server.database.db)).toEqual(before);
    return result.stderr;
  }

  describe(`endless input: ends with a message once a JSON file passes ${JSON_LIMIT}, or an NDJSON line 1 MiB`, () => {
    it(`a JSON stream of NUL characters fails with the size of a JSON file, read no further than ${JSON_LIMIT}`, async () => {
      const counter = { read: 0 };
      const error = await importFailure('data.json', endless('', '\0'.repeat(KIB_64), counter));
      expect(error).toBeInstanceOf(ImportError);
      expect(error.message).toBe(JSON_TOO_LARGE);
      expect(counter.read).toBeGreaterThan(JSON_MAX_BYTES);
      expect(counter.read).toBeLessThanOrEqual(JSON_MAX_BYTES + 2 * KIB_64);
    });

    it(`endless inside an employee, or endless white space after a whole data set, stops the read at ${JSON_LIMIT}`, async () => {
      const inside = { read: 0 };
      const employee = `${PREFIX}{"email": "a@b.example", "firstName": "`;
      const tooLarge = await importFailure(
        'data.json',
        endless(employee, 'x'.repeat(KIB_64), inside),
      );
      expect(tooLarge).toBeInstanceOf(ImportError);
      expect(tooLarge.message).toBe(JSON_TOO_LARGE);
      expect(inside.read).toBeLessThanOrEqual(JSON_MAX_BYTES + 2 * KIB_64);
      // A complete data set followed by more than the limit is refused too: the file is.
      const after = { read: 0 };
      const whole = `${JSON.stringify(acmeDataSet())}\n`;
      const padded = await importFailure('data.json', endless(whole, ' '.repeat(KIB_64), after));
      expect(padded.message).toBe(JSON_TOO_LARGE);
      expect(after.read).toBeLessThanOrEqual(JSON_MAX_BYTES + 2 * KIB_64);
    });

    it('NUL characters where a value starts, in a file under the limit, are a syntax error at that place', async () => {
      const error = await importFailure('data.json', chunksOf(`${PREFIX}${'\0'.repeat(KIB_64)}`));
      expect(error.message).toBe(
        `not valid JSON (line 1, column ${PREFIX.length + 1}): Unexpected character U+0000`,
      );
      const zeros = await importFailure('data.json', chunksOf('\0'.repeat(3 * KIB_64)));
      expect(zeros.message).toBe('not valid JSON (line 1, column 1): Unexpected character U+0000');
    });

    it('an NDJSON stream (by its name) with no line break fails when its first line passes 1 MiB', async () => {
      for (const filler of ['\0', 'x', ' ']) {
        const counter = { read: 0 };
        const error = await importFailure(
          'data.ndjson',
          endless('', filler.repeat(KIB_64), counter),
        );
        expect(error).toBeInstanceOf(ImportError);
        expect(error.message).toBe('line 1: a record larger than 1 MiB, the limit for one line');
        expect(counter.read).toBeLessThanOrEqual(MAX_LINE_BYTES + 2 * KIB_64);
      }
      // The line that passes the limit is named, after good lines.
      const counter = { read: 0 };
      const organization = '{"organization": {"slug": "acme", "name": "Acme"}}\n\n';
      const error = await importFailure(
        'data.ndjson',
        endless(organization, 'y'.repeat(KIB_64), counter),
      );
      expect(error.message).toBe('line 3: a record larger than 1 MiB, the limit for one line');
      expect(counter.read).toBeLessThanOrEqual(MAX_LINE_BYTES + 3 * KIB_64);
    });

    it(`bytes of zeros on standard input end the same way: at ${JSON_LIMIT} as JSON, at 1 MiB as NDJSON`, async () => {
      let read = 0;
      const zeros = async function* () {
        while (read < ENDLESS_STOP) {
          read += KIB_64;
          yield new Uint8Array(KIB_64);
        }
      };
      const error = await importFailure('-', zeros());
      expect(error.message).toBe(JSON_TOO_LARGE);
      expect(read).toBeLessThanOrEqual(JSON_MAX_BYTES + 2 * KIB_64);
      // Standard input whose first line is an organisation line is NDJSON.
      read = 0;
      const ndjson = async function* () {
        const first = utf8('{"organization": {"slug": "acme", "name": "Acme"}}\n');
        read += first.length;
        yield first;
        yield* zeros();
      };
      expect((await importFailure('-', ndjson())).message).toBe(
        'line 2: a record larger than 1 MiB, the limit for one line',
      );
      expect(read).toBeLessThanOrEqual(MAX_LINE_BYTES + 3 * KIB_64);
    });
  });

  describe(`sizes: a JSON file whole within ${JSON_LIMIT}, an NDJSON line within 1 MiB, in bytes`, () => {
    it(`a JSON file of exactly ${JSON_LIMIT} (in bytes, of 2-byte characters) is read; one byte more is not`, async () => {
      // Half of the file is `é`, two bytes each: counted in characters it would pass.
      const note = 'é'.repeat(JSON_MAX_BYTES / 4);
      const head = `{"organization": {"slug": "acme", "name": "Acme", "note": "${note}"}, "meritCycles": []}`;
      const text = (size: number) => head + ' '.repeat(size - byteLength(head));
      expect(byteLength(text(JSON_MAX_BYTES))).toBe(JSON_MAX_BYTES);
      const records = await recordsOf('data.json', chunksOf(text(JSON_MAX_BYTES)));
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({
        kind: 'root',
        value: { organization: { slug: 'acme', note } },
      });
      const error = await failure(recordsOf('data.json', chunksOf(text(JSON_MAX_BYTES + 1))));
      expect(error).toBeInstanceOf(ImportError);
      expect(error.message).toBe(JSON_TOO_LARGE);
      // The same limit for a file whose format is found by its first line (standard input).
      const stdin = await failure(recordsOf('-', chunksOf(`\n${text(JSON_MAX_BYTES)}`)));
      expect(stdin.message).toBe(JSON_TOO_LARGE);
    });

    it('a JSON record has no limit of its own: employees, a cycle and the top object of MiBs are read', async () => {
      const big = 'b'.repeat(600_000);
      const employees = [1, 2, 3].map((n) => `{"n": ${n}, "big": "${big}"}`).join(', ');
      const cycle = (n: number) =>
        `{"name": "c${n}", "a": "${big}", "employees": [${employees}], "b": "${big}"}`;
      const text = `{"organization": {"big": "${big}"}, "meritCycles": [${cycle(1)}, ${cycle(2)}, "${'c'.repeat(2 * MAX_LINE_BYTES)}"], "x": "${big}${big}"}`;
      const records = await recordsOf('data.json', chunksOf(text));
      expect(records.map((record) => record.kind).join()).toBe(
        `root,${[1, 2].map(() => 'meritCycle,employee,employee,employee').join()},meritCycle`,
      );
      expect(records[0]).toMatchObject({ value: { x: `${big}${big}` } });
      expect(records[1]).toMatchObject({ value: { a: big, b: big } });
      expect(recordValue(records[9] as ImportRecord)).toHaveLength(2 * MAX_LINE_BYTES);
    });

    it('an NDJSON line of exactly 1 MiB in bytes (and its CR) is read; one byte more is not', async () => {
      // A thousand `é` of two bytes: counted in characters, the longer line would pass.
      const line = (size: number) => `{"x": "${'é'.repeat(1000)}${'a'.repeat(size - 2009)}"}`;
      expect(byteLength(line(MAX_LINE_BYTES))).toBe(MAX_LINE_BYTES);
      const text = (size: number) =>
        `{"organization": {"slug": "acme", "name": "Acme"}}\r\n${line(size)}\r\n`;
      const records = await recordsOf('a.ndjson', chunksOf(text(MAX_LINE_BYTES)));
      expect(records.map((record) => record.kind)).toEqual(['root', 'problem']);
      // The last line, without a line break, the same.
      const last = await recordsOf('a.ndjson', chunksOf(text(MAX_LINE_BYTES).slice(0, -2)));
      expect(last.map((record) => record.kind)).toEqual(['root', 'problem']);
      for (const tooLong of [text(MAX_LINE_BYTES + 1), text(MAX_LINE_BYTES + 1).slice(0, -2)]) {
        const error = await failure(recordsOf('a.ndjson', chunksOf(tooLong)));
        expect(error).toBeInstanceOf(ImportError);
        expect(error.message).toBe('line 2: a record larger than 1 MiB, the limit for one line');
      }
    });

    it('values split anywhere across chunks (escapes, brackets in strings, numbers, literals, characters of 2 to 4 bytes) are what JSON.parse reads', async () => {
      const employees = [
        { s: 'quote " backslash \\ both \\" end\\', b: '{[}]', n: -1.5e-3 },
        { s: '\\\\\\"', u: '\u00e9\ud83d\ude00 \\u0041', t: true, f: false, z: null },
        { deep: [[{ a: ['}', ']', '\\'] }], [], {}], empty: '' },
        [1, 2, [3]],
        'text',
        42,
        null,
      ];
      const dataSet = {
        organization: { slug: 'acme', name: 'A "quoted" }name{ €' },
        meritCycles: [
          { employees, name: 'c', rates: { EUR: 0.92, GBP: 1e2 }, flag: true, nothing: null },
        ],
      };
      const text = JSON.stringify(dataSet, null, 1);
      const expected = await recordsOf('data.json', chunksOf(text, text.length));
      expect(expected.filter((record) => record.kind === 'employee').map(recordValue)).toEqual(
        employees,
      );
      for (const size of [1, 2, 3, 5, 7, 64]) {
        expect(await recordsOf('data.json', bytesOf(utf8(text), size))).toEqual(expected);
      }
    });
  });

  describe('UTF-8: bytes that are not UTF-8 fail with their line and column', () => {
    it('names the line and column of the first bad byte, across chunks, in JSON and NDJSON', async () => {
      const json = concat(utf8('{"a": 1,\n  "B'), [0xff, 0xfe], utf8('ob"}\n'));
      const ndjson = concat(utf8('{"organization": {}}\n  "B'), [0xff, 0xfe], utf8('ob"}\n'));
      for (const size of [1, 3, KIB_64]) {
        for (const [name, bytes] of [
          ['data.json', json],
          ['-', json],
          ['data.ndjson', ndjson],
          ['-', ndjson],
        ] as const) {
          const error = await failure(recordsOf(name, bytesOf(bytes, size)));
          expect(error).toBeInstanceOf(ImportError);
          expect(error.message).toBe(
            'not valid UTF-8 (line 2, column 5): byte 0xFF; save the file as UTF-8',
          );
        }
      }
    });

    it('refuses overlong forms, surrogates, code points past U+10FFFF and a cut character at the end', async () => {
      const cases: [number[], string][] = [
        [[0xc0, 0xaf], 'byte 0xC0'],
        [[0xe0, 0x80, 0xaf], 'byte 0xE0'],
        [[0xed, 0xa0, 0x80], 'byte 0xED'],
        [[0xf4, 0x90, 0x80, 0x80], 'byte 0xF4'],
        [[0xf5], 'byte 0xF5'],
        [[0x80], 'byte 0x80'],
        [[0xe2, 0x82], 'the file ends inside a character'],
      ];
      for (const [bad, what] of cases) {
        for (const [name, start] of [
          ['data.json', 'é\nab'],
          ['data.ndjson', '{"organization": {"name": "é"}}\nab'],
        ] as const) {
          const error = await failure(recordsOf(name, bytesOf(concat(utf8(start), bad), 1)));
          expect(error.message).toBe(
            `not valid UTF-8 (line 2, column 3): ${what}; save the file as UTF-8`,
          );
        }
      }
      // A character cut short by the end of an NDJSON line, not of the file, is a bad byte.
      const cut = concat(utf8('{"organization": {}}\nab'), [0xe2, 0x82], utf8('\n{}\n'));
      expect((await failure(recordsOf('data.ndjson', bytesOf(cut, 1)))).message).toBe(
        'not valid UTF-8 (line 2, column 3): byte 0xE2; save the file as UTF-8',
      );
    });

    it('reads characters of 2, 3 and 4 bytes split anywhere, and takes a byte order mark off the first line', async () => {
      const name = 'é€😀';
      const json = `\ufeff${JSON.stringify({ organization: { name }, meritCycles: [] })}\n`;
      const ndjson = `\ufeff${JSON.stringify({ organization: { name } })}\n${JSON.stringify({ meritCycle: { name: 'ü😀' } })}\n`;
      for (const size of [1, 2, 3, 5]) {
        expect(await recordsOf('data.json', bytesOf(utf8(json), size))).toEqual([
          { kind: 'root', value: { organization: { name }, meritCycles: [] } },
        ]);
        for (const file of ['data.ndjson', '-']) {
          expect((await recordsOf(file, bytesOf(utf8(ndjson), size))).map(recordValue)).toEqual([
            { organization: { name }, meritCycles: [] },
            { name: 'ü😀' },
          ]);
        }
      }
    });

    it('the command line refuses JSON and NDJSON files with bad bytes, changing nothing', async () => {
      const json = join(dir, 'bad.json');
      writeFileSync(
        json,
        concat(utf8('{"organization": {"slug": "acme", "name": "Ac'), [0xff, 0xfe], utf8('me"}}')),
      );
      const ndjson = join(dir, 'bad.ndjson');
      writeFileSync(
        ndjson,
        concat(
          utf8('{"organization": {"slug": "acme", "name": "Acme"}}\n{"x": "'),
          [0xfe],
          utf8('"}\n'),
        ),
      );
      const [ofJson, ofNdjson] = await Promise.all([cliFailure([json]), cliFailure([ndjson])]);
      expect(ofJson).toMatch(
        /\nnot valid UTF-8 \(line 1, column 46\): byte 0xFF; save the file as UTF-8\n$/,
      );
      expect(ofNdjson).toMatch(
        /\nnot valid UTF-8 \(line 2, column 8\): byte 0xFE; save the file as UTF-8\n$/,
      );
    });
  });

  describe('what the file is', () => {
    it('a data set of more than 10,000 merit cycles fails at the first one too many, before anything is written', async () => {
      const cycle = (n: number) =>
        `{"name": "Cycle ${n}", "status": "active", "currency": "USD", "startDate": "2026-01-01T00:00:00Z", "endDate": "2026-02-01T00:00:00Z"}`;
      async function* cycles(): AsyncGenerator<Uint8Array> {
        yield Buffer.from('{"organization": {"slug": "many", "name": "Many"}, "meritCycles": [');
        // A hundred cycles a chunk: 10,001 chunks of one each took most of the test's time.
        for (let from = 0; from <= MAX_MERIT_CYCLES; from += 100) {
          let text = '';
          for (let n = from; n < from + 100 && n <= MAX_MERIT_CYCLES; n++) {
            text += `${n > 0 ? ',' : ''}${cycle(n)}`;
          }
          yield Buffer.from(text);
        }
        yield Buffer.from(']}');
      }
      const error = await importFailure('data-set.json', cycles());
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).lines).toEqual([
        'meritCycles[10000]: a data set holds at most 10,000 merit cycles',
      ]);
    });

    it('a file that is a number, null, true, a string or an array is no data set, whatever its size', async () => {
      const cases: [string, string][] = [
        ['42', 'a number'],
        ['-1.5e3\n', 'a number'],
        ['null', 'null'],
        [' true ', 'true or false'],
        ['"text"', 'a string'],
        ['[]', 'an array'],
        ['[1, 2]', 'an array'],
        [`"${'s'.repeat(3 * MAX_LINE_BYTES)}"`, 'a string'],
      ];
      for (const [text, what] of cases) {
        expect(await problemsOf('data.json', text)).toEqual([
          `(the file): must be a JSON object (a data set), not ${what}`,
        ]);
      }
    });

    it('a file that ends inside a value is a syntax error where it ends', async () => {
      expect(await problemsOf('data.json', '[1, 2')).toEqual([
        "not valid JSON (line 1, column 6): Expected ',' or ']' after array element in JSON at position 5",
      ]);
      const string = `"${'s'.repeat(3 * MAX_LINE_BYTES)}`;
      expect(await problemsOf('data.json', string)).toEqual([
        `not valid JSON (line 1, column ${string.length + 1}): Unterminated string in JSON at position ${string.length}`,
      ]);
    });

    it('a key given twice counts once, with its last value, as JSON.parse reads it: meritCycles, a cycle’s employees', async () => {
      const text = `{"organization": {"slug": "acme"}, "meritCycles": [{"name": "first"}],
        "meritCycles": [{"name": "c", "employees": [{"n": 1}], "employees": [{"n": 2}, {"n": 3}]}]}`;
      expect(await recordsOf('data.json', chunksOf(text))).toEqual([
        { kind: 'root', value: { organization: { slug: 'acme' }, meritCycles: [] } },
        { kind: 'meritCycle', index: 0, value: { name: 'c' }, employees: true },
        { kind: 'employee', cycle: 0, index: 0, value: { n: 2 } },
        { kind: 'employee', cycle: 0, index: 1, value: { n: 3 } },
      ]);
    });

    it('a number followed by more, or a character no value starts with, is a syntax error', async () => {
      expect((await importFailure('data.json', chunksOf('42 x'))).message).toBe(
        'not valid JSON (line 1, column 4): Unexpected non-whitespace character after JSON at position 3',
      );
      expect((await importFailure('data.json', chunksOf('\n  x'))).message).toBe(
        "not valid JSON (line 2, column 3): Unexpected token 'x'",
      );
    });

    it('an empty file, or one of white space or a byte order mark alone, says it is empty', async () => {
      for (const text of ['', ' \n\t\r\n', '\ufeff', '\ufeff\n']) {
        for (const name of ['data.json', '-']) {
          expect(await problemsOf(name, text)).toEqual([
            'the file is empty: it needs a data set, a JSON object {"organization": …, "meritCycles": […]}',
          ]);
        }
        expect(await problemsOf('data.ndjson', text)).toEqual([
          'the file is empty: it needs a first line {"organization": …}',
        ]);
        expect(() => employeesFromCsv(text, NO_SCHEMA)).toThrow(
          fileProblem('the file is empty: it needs a header row and one row per employee'),
        );
      }
    });

    it('quotes no control character of the input in a message', async () => {
      const json = '{"organization": {"a": x\u001b[2J\u0007}}';
      const error = await importFailure('data.json', chunksOf(json));
      expect(error.message).toBe("not valid JSON (line 1, column 24): Unexpected token 'x'");
      const ndjson = await importFailure('data.ndjson', chunksOf(`${json}\n`));
      expect(ndjson.message).toMatch(/^line 1 is not valid JSON: .*\\u001B\[2J\\u0007/);
      expect(controlCharacters(ndjson.message)).toEqual([]);
      for (const [text, where] of [
        ['\u0001', 'column 1): Unexpected character U+0001'],
        ['{"a": \u001b[2J}', 'column 7): Unexpected character U+001B'],
      ] as const) {
        const control = await importFailure('data.json', chunksOf(text));
        expect(control.message).toBe(`not valid JSON (line 1, ${where}`);
      }
    });
  });

  describe('CSV: read whole, at most 4 MiB and 50,000 rows, strictly UTF-8', () => {
    const header = 'email,firstName,lastName,currencyCode,eligibilityStatus\n';

    it('reads a file of exactly 4 MiB; one byte more, or /dev/zero, fails with the limit', async () => {
      const file = join(dir, 'limit.csv');
      const rows = 'a@b.example,A,B,USD,eligible\n';
      const body = header + rows.repeat(Math.floor((CSV_MAX_BYTES - header.length) / rows.length));
      const exact = body + ' '.repeat(CSV_MAX_BYTES - body.length);
      writeFileSync(file, exact);
      expect(await readCsvText(file)).toBe(exact);
      writeFileSync(file, `${exact} `);
      const tooLarge = fileProblem(
        'the file is larger than 4 MiB, the limit for a CSV import (one merit cycle); give a larger data set as NDJSON',
      );
      await expect(readCsvText(file)).rejects.toThrow(tooLarge);
      await expect(readCsvText('/dev/zero')).rejects.toThrow(tooLarge);
      expect(() => employeesFromCsv(`${exact} `, NO_SCHEMA)).toThrow(tooLarge);
    });

    it('refuses more than 50,000 rows, however short', () => {
      const rows = (count: number) => header + ',,,,\n'.repeat(count);
      expect(parseCsvRecords(rows(CSV_MAX_ROWS))).toHaveLength(CSV_MAX_ROWS + 1);
      expect(() => parseCsvRecords(rows(CSV_MAX_ROWS + 1))).toThrow(
        fileProblem(
          'line 50002: more than 50,000 rows, the limit for a CSV import (one merit cycle); give a larger data set as NDJSON',
        ),
      );
    });

    it('keeps every problem of a file with one in every row, grouped, the first rows shown', () => {
      let error: unknown;
      try {
        employeesFromCsv(header + 'x\n'.repeat(1_000), NO_SCHEMA);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SheetProblemsError);
      const { lines, sheetProblems, sheetTotal } = error as SheetProblemsError;
      expect(sheetTotal).toBe(1_000);
      expect(sheetProblems).toHaveLength(1_000);
      expect(lines.slice(1)).toEqual([
        '1,000 times: This row has 1 values; the first row has 5 columns. Check the row for a value with a separator (, or ;) in it that is not in quotes, or for a missing value.',
        '  row 2',
        '  row 3',
        '  row 4',
        '  row 5',
        '  row 6',
        '  … and 995 more',
      ]);
    });

    it('refuses bytes that are not UTF-8 with their line and column; takes a byte order mark off', async () => {
      const file = join(dir, 'bad.csv');
      writeFileSync(
        file,
        concat(utf8(header), utf8('a@b.example,B'), [0xff], utf8('ob,C,USD,eligible\n')),
      );
      await expect(readCsvText(file)).rejects.toThrow(
        fileProblem('not valid UTF-8 (line 2, column 14): byte 0xFF; save the file as UTF-8'),
      );
      writeFileSync(file, `\ufeff${header}`);
      expect(await readCsvText(file)).toBe(header);
    });
  });

  describe('the command line', () => {
    it('`compplan import /dev/zero`, and a .ndjson name for it, end at once with a message', async () => {
      const link = join(dir, 'zero.ndjson');
      symlinkSync('/dev/zero', link);
      const [asJson, asNdjson] = await Promise.all([cliFailure(['/dev/zero']), cliFailure([link])]);
      expect(asJson).toBe(`${NOT_IMPORTED}${JSON_TOO_LARGE}\n`);
      expect(asNdjson).toBe(
        `${NOT_IMPORTED}line 1: a record larger than 1 MiB, the limit for one line\n`,
      );
    });

    it('a file of 40 MB (a string in an employee), a file that is a number, and an empty file: one message each', async () => {
      const big = join(dir, 'big.json');
      writeFileSync(big, `${PREFIX}{"firstName": "${'x'.repeat(40 * 10 ** 6)}"}]}]}`);
      const number = join(dir, 'number.json');
      writeFileSync(number, '42');
      const empty = join(dir, 'empty.json');
      writeFileSync(empty, '');
      const [ofBig, ofNumber, ofEmpty] = await Promise.all(
        [big, number, empty].map((file) => cliFailure([file])),
      );
      expect(ofBig).toBe(`${NOT_IMPORTED}${JSON_TOO_LARGE}\n`);
      expect(ofNumber).toBe(
        `${NOT_IMPORTED}(the file): must be a JSON object (a data set), not a number\n`,
      );
      expect(ofEmpty).toBe(
        `${NOT_IMPORTED}the file is empty: it needs a data set, a JSON object {"organization": …, "meritCycles": […]}\n`,
      );
    });

    it('random bytes end with a message that quotes none of them', async () => {
      const random = join(dir, 'random.json');
      writeFileSync(random, randomBytes(2 ** 20));
      const link = join(dir, 'random.ndjson');
      symlinkSync('/dev/urandom', link);
      // Endless: read as JSON up to its limit; as NDJSON, up to its first line.
      const [ofFile, asJson, asNdjson] = await Promise.all(
        [random, '/dev/urandom', link].map((file) => cliFailure([file])),
      );
      expect(ofFile).toMatch(
        /^compplan: the data set was not imported; nothing changed\.\nnot valid UTF-8 .*\n$/,
      );
      expect(asJson).toBe(`${NOT_IMPORTED}${JSON_TOO_LARGE}\n`);
      expect(asNdjson).toMatch(
        /^compplan: the data set was not imported; nothing changed\.\n(not valid UTF-8 |line 1 ).*\n$/,
      );
    });
  });
});

/** The control characters (C0, DEL, C1) in a text, a line break between lines aside. */
function controlCharacters(text: string): string[] {
  return [...text.replaceAll('\n', ' ')].filter((char) => {
    const code = char.charCodeAt(0);
    return code < 0x20 || (code >= 0x7f && code <= 0x9f);
  });
}

function recordValue(record: ImportRecord): unknown {
  return 'value' in record ? record.value : undefined;
}
