// The limits of reading a data set (docs/import-format.md, "Limits"): a record may be at
// most 1 MiB, so that endless or huge input ends with a message instead of filling memory
// (and the import's transaction); text must be UTF-8; an empty file says so; a file that
// is no JSON object says what it is instead; a CSV file may be at most 4 MiB and 50,000
// rows. Each case is read as `compplan import` reads it, and changes nothing.
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
import { DataSetSyntaxError, ImportError, MAX_RECORD_CHARS } from '../../src/import/errors.js';
import { MAX_MERIT_CYCLES } from '../../src/import/intake.js';
import { jsonRecords } from '../../src/import/json-stream.js';
import { importRecords } from '../../src/import/load.js';
import type { ImportRecord } from '../../src/import/records.js';
import { decodeUtf8, readCsvText, recordsOfStream } from '../../src/import/source.js';
import { acmeDataSet } from '../fixtures/data-sets.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dumpTables } from '../helpers/snapshot.js';

const KIB_64 = 64 * 1024;
/** Where endless input stops in these tests: far past any limit, so a reader that does not
 * stop at its limit ends with another message (or reads it all) instead of hanging. */
const ENDLESS_STOP = 64 * 1024 * 1024;
const PREFIX =
  '{"organization": {"slug": "acme", "name": "Acme"}, "meritCycles": [{"name": "c", "employees": [';

/** What a stream gave its reader, in characters or bytes. */
interface Counter {
  read: number;
}

/** `first`, then `filler` again and again up to ENDLESS_STOP, as /dev/zero would be. */
async function* endless(first: string, filler: string, counter: Counter): AsyncGenerator<string> {
  counter.read += first.length;
  yield first;
  while (counter.read < ENDLESS_STOP) {
    counter.read += filler.length;
    yield filler;
  }
}

/** The text in chunks of `size`, as a file is read. */
async function* chunksOf(text: string, size = KIB_64): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

/** Bytes in chunks of `size`. */
async function* bytesOf(bytes: Uint8Array, size = KIB_64): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
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
  async function importFailure(name: string, chunks: AsyncIterable<string>): Promise<Error> {
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
    return error.problems;
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

  describe('endless input: ends with a message once a record passes 1 MiB', () => {
    it('a JSON stream of NUL characters fails at its first character', async () => {
      const counter = { read: 0 };
      const error = await importFailure('data.json', endless('', '\0'.repeat(KIB_64), counter));
      expect(error).toBeInstanceOf(DataSetSyntaxError);
      expect(error.message).toBe('not valid JSON (line 1, column 1): Unexpected character U+0000');
      // The format test reads at most a MiB for a first line; nothing more is read.
      expect(counter.read).toBeLessThanOrEqual(MAX_RECORD_CHARS + 2 * KIB_64);
    });

    it('NUL characters where a value starts, or endless inside an employee, stop the read', async () => {
      const atValue = { read: 0 };
      const error = await importFailure('data.json', endless(PREFIX, '\0'.repeat(KIB_64), atValue));
      expect(error.message).toBe(
        `not valid JSON (line 1, column ${PREFIX.length + 1}): Unexpected character U+0000`,
      );
      const inside = { read: 0 };
      const employee = `${PREFIX}{"email": "a@b.example", "firstName": "`;
      const tooLarge = await importFailure(
        'data.json',
        endless(employee, '\0'.repeat(KIB_64), inside),
      );
      expect(tooLarge).toBeInstanceOf(DataSetSyntaxError);
      expect(tooLarge.message).toBe(
        `meritCycles[0].employees[0] (line 1, column ${PREFIX.length + 1}): a record larger than 1 MiB, the limit for one employee`,
      );
      expect(inside.read).toBeLessThanOrEqual(MAX_RECORD_CHARS + 3 * KIB_64);
    });

    it('an NDJSON stream (by its name) with no line break fails when its first line passes 1 MiB', async () => {
      for (const filler of ['\0', 'x', ' ']) {
        const counter = { read: 0 };
        const error = await importFailure(
          'data.ndjson',
          endless('', filler.repeat(KIB_64), counter),
        );
        expect(error).toBeInstanceOf(DataSetSyntaxError);
        expect(error.message).toBe('line 1: a record larger than 1 MiB, the limit for one line');
        expect(counter.read).toBeLessThanOrEqual(MAX_RECORD_CHARS + 2 * KIB_64);
      }
      // The line that passes the limit is named, after good lines.
      const counter = { read: 0 };
      const organization = '{"organization": {"slug": "acme", "name": "Acme"}}\n\n';
      const error = await importFailure(
        'data.ndjson',
        endless(organization, 'y'.repeat(KIB_64), counter),
      );
      expect(error.message).toBe('line 3: a record larger than 1 MiB, the limit for one line');
    });

    it('bytes of zeros, decoded as a file is, end the same way', async () => {
      let read = 0;
      const zeros = async function* () {
        while (read < ENDLESS_STOP) {
          read += KIB_64;
          yield new Uint8Array(KIB_64);
        }
      };
      const error = await importFailure('-', decodeUtf8(zeros()));
      expect(error.message).toBe('not valid JSON (line 1, column 1): Unexpected character U+0000');
      expect(read).toBeLessThanOrEqual(MAX_RECORD_CHARS + 2 * KIB_64);
    });
  });

  describe('large values: read once, and no more than 1 MiB of a record is held', () => {
    it('20 MB of white space inside an employee fails with the size of a record, read no further', async () => {
      const counter = { read: 0 };
      const start = `${PREFIX}{"email": "a@b.example",`;
      const chunks = async function* () {
        for await (const chunk of endless(start, ' '.repeat(KIB_64), counter)) {
          if (counter.read > 20 * 2 ** 20) return;
          yield chunk;
        }
      };
      const error = await importFailure('data.json', chunks());
      expect(error.message).toBe(
        `meritCycles[0].employees[0] (line 1, column ${PREFIX.length + 1}): a record larger than 1 MiB, the limit for one employee`,
      );
      expect(counter.read).toBeLessThanOrEqual(MAX_RECORD_CHARS + 3 * KIB_64);
    });

    it('an employee of exactly 1 MiB is read; one character more is not', async () => {
      const employee = (size: number) => `{"x": "${'a'.repeat(size - 9)}"}`;
      expect(employee(MAX_RECORD_CHARS)).toHaveLength(MAX_RECORD_CHARS);
      const text = (size: number) => `${PREFIX}\n  ${employee(size)}, {"y": 1}\n]}]}`;
      const records = await collect(jsonRecords(chunksOf(text(MAX_RECORD_CHARS))));
      expect(records.filter((record) => record.kind === 'employee')).toHaveLength(2);
      const error = await failure(collect(jsonRecords(chunksOf(text(MAX_RECORD_CHARS + 1)))));
      expect(error.message).toBe(
        'meritCycles[0].employees[0] (line 2, column 3): a record larger than 1 MiB, the limit for one employee',
      );
    });

    it('an NDJSON line of exactly 1 MiB (and its CR) is read; one character more is not', async () => {
      const line = (size: number) => `{"x": "${'a'.repeat(size - 9)}"}`;
      const text = (size: number) =>
        `{"organization": {"slug": "acme", "name": "Acme"}}\r\n${line(size)}\r\n`;
      const records = await collect(
        await recordsOfStream('a.ndjson', chunksOf(text(MAX_RECORD_CHARS))),
      );
      expect(records.map((record) => record.kind)).toEqual(['root', 'problem']);
      const error = await failure(
        (async () =>
          collect(await recordsOfStream('a.ndjson', chunksOf(text(MAX_RECORD_CHARS + 1)))))(),
      );
      expect(error.message).toBe('line 2: a record larger than 1 MiB, the limit for one line');
    });

    it('a cycle counts without its employees, the top object without its cycles; each within 1 MiB', async () => {
      const big = 'b'.repeat(600_000);
      const employees = [1, 2, 3].map((n) => `{"n": ${n}, "big": "${big}"}`).join(', ');
      // Three employees of 600 KB in a cycle, and three cycles of 600 KB: all fine.
      const cycle = (n: number) =>
        `{"name": "c${n}", "big": "${big}", "employees": [${employees}]}`;
      const fine = `{"organization": {"big": "${big}"}, "meritCycles": [${cycle(1)}, ${cycle(2)}, ${cycle(3)}]}`;
      const records = await collect(jsonRecords(chunksOf(fine)));
      expect(records.map((record) => record.kind).join()).toBe(
        `${[1, 2, 3].map(() => 'employee,employee,employee,meritCycle').join()},root`,
      );
      // Two fields of 600 KB in one cycle, around its employees, are too much.
      const cycleText = `{"name": "c", "a": "${big}", "employees": [${employees}], "b": "${big}"}`;
      const tooLargeCycle = `{"meritCycles": [${cycleText}]}`;
      expect((await failure(collect(jsonRecords(chunksOf(tooLargeCycle))))).message).toBe(
        `meritCycles[0].b (line 1, column ${tooLargeCycle.indexOf(`"b": "`) + 6}): a record larger than 1 MiB, the limit for a merit cycle without its employees`,
      );
      const tooLargeTop = `{"organization": {"big": "${big}"}, "meritCycles": [${cycle(1)}], "x": "${big}"}`;
      expect((await failure(collect(jsonRecords(chunksOf(tooLargeTop))))).message).toBe(
        `x (line 1, column ${tooLargeTop.indexOf(`"x": "`) + 6}): a record larger than 1 MiB, the limit for the data set without its merit cycles`,
      );
      const list = `{"meritCycles": ["${'c'.repeat(MAX_RECORD_CHARS)}"]}`;
      expect((await failure(collect(jsonRecords(chunksOf(list))))).message).toBe(
        'meritCycles[0] (line 1, column 18): a record larger than 1 MiB, the limit for one merit cycle',
      );
    });

    it('values scanned chunk by chunk (escapes, brackets in strings, numbers, literals) are what JSON.parse reads', async () => {
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
        organization: { slug: 'acme', name: 'A "quoted" }name{' },
        meritCycles: [
          { employees, name: 'c', rates: { EUR: 0.92, GBP: 1e2 }, flag: true, nothing: null },
        ],
      };
      const text = JSON.stringify(dataSet, null, 1);
      const expected = await collect(jsonRecords(chunksOf(text, text.length)));
      expect(expected.filter((record) => record.kind === 'employee').map(recordValue)).toEqual(
        employees,
      );
      for (const size of [1, 2, 3, 5, 7, 64]) {
        expect(await collect(jsonRecords(chunksOf(text, size)))).toEqual(expected);
      }
    });
  });

  describe('UTF-8: bytes that are not UTF-8 fail with their line and column', () => {
    it('names the line and column of the first bad byte, across chunks', async () => {
      const bytes = concat(utf8('{"a": 1,\n  "B'), [0xff, 0xfe], utf8('ob"}\n'));
      for (const size of [1, 3, KIB_64]) {
        const error = await failure(collect(decodeUtf8(bytesOf(bytes, size))));
        expect(error).toBeInstanceOf(DataSetSyntaxError);
        expect(error.message).toBe(
          'not valid UTF-8 (line 2, column 5): byte 0xFF; save the file as UTF-8',
        );
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
        const error = await failure(collect(decodeUtf8(bytesOf(concat(utf8('é\nab'), bad), 1))));
        expect(error.message).toBe(
          `not valid UTF-8 (line 2, column 3): ${what}; save the file as UTF-8`,
        );
      }
    });

    it('reads characters of 2, 3 and 4 bytes split anywhere, and keeps a byte order mark for the reader', async () => {
      const text = '\ufeff{"a": "é€😀", "b": "ü"}\n'.repeat(3);
      for (const size of [1, 2, 3, 5]) {
        expect((await collect(decodeUtf8(bytesOf(utf8(text), size)))).join('')).toBe(text);
      }
    });

    it('the command line refuses JSON and NDJSON files with bad bytes, changing nothing', async () => {
      const json = join(dir, 'bad.json');
      writeFileSync(
        json,
        concat(utf8('{"organization": {"slug": "acme", "name": "Ac'), [0xff, 0xfe], utf8('me"}}')),
      );
      expect(await cliFailure([json])).toMatch(
        /\nnot valid UTF-8 \(line 1, column 46\): byte 0xFF; save the file as UTF-8\n$/,
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
      expect(await cliFailure([ndjson])).toMatch(
        /\nnot valid UTF-8 \(line 2, column 8\): byte 0xFE; save the file as UTF-8\n$/,
      );
    });
  });

  describe('what the file is', () => {
    it('a data set of more than 10,000 merit cycles fails at the first one too many, before anything is written', async () => {
      const cycle = (n: number) =>
        `{"name": "Cycle ${n}", "status": "active", "currency": "USD", "startDate": "2026-01-01T00:00:00Z", "endDate": "2026-02-01T00:00:00Z"}`;
      async function* cycles(): AsyncGenerator<string> {
        yield '{"organization": {"slug": "many", "name": "Many"}, "meritCycles": [';
        for (let n = 0; n <= MAX_MERIT_CYCLES; n++) yield `${n > 0 ? ',' : ''}${cycle(n)}`;
        yield ']}';
      }
      const error = await importFailure('data-set.json', cycles());
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).problems).toEqual([
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
        ['[1, 2', 'an array'],
        [`"${'s'.repeat(3 * MAX_RECORD_CHARS)}`, 'a string'],
      ];
      for (const [text, what] of cases) {
        expect(await problemsOf('data.json', text)).toEqual([
          `(the file): must be a JSON object (a data set), not ${what}`,
        ]);
      }
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
        expect(() => employeesFromCsv(text)).toThrow(
          new ImportError(['the file is empty: it needs a header row and one row per employee']),
        );
      }
    });

    it('quotes no control character of the input in a message', async () => {
      const json = '{"organization": {"a": x\u001b[2J\u0007}}';
      const error = await importFailure('data.json', chunksOf(json));
      expect(error.message).toContain('\\u001B[2J\\u0007');
      expect(controlCharacters(error.message)).toEqual([]);
      const ndjson = await importFailure('data.ndjson', chunksOf(`${json}\n`));
      expect(ndjson.message).toMatch(/^line 1 is not valid JSON: .*\\u001B\[2J\\u0007/);
      expect(controlCharacters(ndjson.message)).toEqual([]);
      const control = await importFailure('data.json', chunksOf('\u0001'));
      expect(control.message).toBe(
        'not valid JSON (line 1, column 1): Unexpected character U+0001',
      );
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
      const tooLarge = new ImportError([
        'the file is larger than 4 MiB, the limit for a CSV import (one merit cycle); give a larger data set as NDJSON',
      ]);
      await expect(readCsvText(file)).rejects.toThrow(tooLarge);
      await expect(readCsvText('/dev/zero')).rejects.toThrow(tooLarge);
      expect(() => employeesFromCsv(`${exact} `)).toThrow(tooLarge);
    });

    it('refuses more than 50,000 rows, however short', () => {
      const rows = (count: number) => header + ',,,,\n'.repeat(count);
      expect(parseCsvRecords(rows(CSV_MAX_ROWS))).toHaveLength(CSV_MAX_ROWS + 1);
      expect(() => parseCsvRecords(rows(CSV_MAX_ROWS + 1))).toThrow(
        new ImportError([
          'line 50002: more than 50,000 rows, the limit for a CSV import (one merit cycle); give a larger data set as NDJSON',
        ]),
      );
    });

    it('keeps 50 problems of a file with one in every row, and counts the rest', () => {
      let error: unknown;
      try {
        employeesFromCsv(header + 'x\n'.repeat(1_000));
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ImportError);
      const { problems } = error as ImportError;
      expect(problems).toHaveLength(51);
      expect(problems[0]).toBe('row at line 2: has 1 fields, the header has 5');
      expect(problems[50]).toBe('… and 950 more');
    });

    it('refuses bytes that are not UTF-8 with their line and column; accepts a byte order mark', async () => {
      const file = join(dir, 'bad.csv');
      writeFileSync(
        file,
        concat(utf8(header), utf8('a@b.example,B'), [0xff], utf8('ob,C,USD,eligible\n')),
      );
      await expect(readCsvText(file)).rejects.toThrow(
        new ImportError(['not valid UTF-8 (line 2, column 14): byte 0xFF; save the file as UTF-8']),
      );
      writeFileSync(file, `\ufeff${header}`);
      expect(await readCsvText(file)).toBe(`\ufeff${header}`);
    });
  });

  describe('the command line', () => {
    it('`compplan import /dev/zero`, and a .ndjson name for it, end at once with a message', async () => {
      expect(await cliFailure(['/dev/zero'])).toMatch(
        /\nnot valid JSON \(line 1, column 1\): Unexpected character U\+0000\n$/,
      );
      const link = join(dir, 'zero.ndjson');
      symlinkSync('/dev/zero', link);
      expect(await cliFailure([link])).toMatch(
        /\nline 1: a record larger than 1 MiB, the limit for one line\n$/,
      );
    });

    it('a 20 MB string in an employee, a file that is a number, and an empty file: one message each', async () => {
      const big = join(dir, 'big.json');
      writeFileSync(big, `${PREFIX}{"firstName": "${'x'.repeat(20 * 2 ** 20)}"}]}]}`);
      expect(await cliFailure([big])).toMatch(
        new RegExp(
          `\\nmeritCycles\\[0\\]\\.employees\\[0\\] \\(line 1, column ${PREFIX.length + 1}\\): a record larger than 1 MiB, the limit for one employee\\n$`,
        ),
      );
      const number = join(dir, 'number.json');
      writeFileSync(number, '42');
      expect(await cliFailure([number])).toBe(
        'compplan: the data set was not imported; nothing changed.\n(the file): must be a JSON object (a data set), not a number\n',
      );
      const empty = join(dir, 'empty.json');
      writeFileSync(empty, '');
      expect(await cliFailure([empty])).toBe(
        'compplan: the data set was not imported; nothing changed.\nthe file is empty: it needs a data set, a JSON object {"organization": …, "meritCycles": […]}\n',
      );
    });

    it('random bytes end with a message that quotes none of them', async () => {
      expect(await cliFailure(['/dev/urandom'])).toMatch(
        /^compplan: the data set was not imported; nothing changed\.\nnot valid UTF-8 .*\n$/,
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
