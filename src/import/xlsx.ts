// An Excel workbook (.xlsx) of one merit cycle's employees (docs/import-format.md, "Excel
// workbooks"): one sheet read by exceljs with its typed cells as they are — a date cell is a
// date, a number cell a number, a yes-or-no cell a boolean — into the rows of cells with a
// header that a CSV file gives (csv.ts, `employeesFromRows`), so that the checks, the
// problems and the loading are the CSV import's. Nothing is guessed: the reading choices
// of a CSV file (how dates and amounts are written, the encoding) do not apply.
//
// A workbook is a zip file, so a small file can claim gigabytes (a zip bomb). Before
// exceljs sees a byte, yauzl reads the zip's central directory — at most MAX_ENTRIES
// entries, MAX_UNCOMPRESSED bytes declared in all, none encrypted — and inflates every
// entry, counting the bytes (an entry that inflates to more than it declares fails).
// exceljs (whose unzipper reads the local headers one after another) is then given a zip
// stream made of only the entries it needs, copied as they are, in the order it reads best:
// the workbook, its relationships, the styles and the shared strings before the sheet, so
// that it never sets a sheet aside in a temporary file of its own.
import { open as openFile } from 'node:fs/promises';
import { PassThrough, type Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import yauzl from 'yauzl';
import { decimalOfNumber } from '../columns/types.js';
import {
  CSV_MAX_BYTES,
  CSV_MAX_ROWS,
  type CsvCycle,
  employeesFromRows,
  type SheetRow,
} from './csv.js';
import { fileProblem, inMiB } from './errors.js';
import type { SheetProblem } from './sheet-problems.js';
import type { ReadAs } from './sheet-reading.js';
import { headOfFile, type WorkbookInput, workbookKindOf, XLSX_MAX_BYTES } from './workbook-kind.js';

/** At most this many entries in the zip (a workbook has a dozen or two). */
export const MAX_ENTRIES = 1000;
/** At most this many bytes once inflated, all entries together. */
export const MAX_UNCOMPRESSED = 256 * 1024 * 1024;
/** The workbook's own parts (the sheet list and its relationships) are small. */
const MAX_PART = 4 * 1024 * 1024;

const SAVE_AGAIN = 'open it in Excel or LibreOffice and save it again as an Excel workbook (.xlsx)';
const NOT_READ = 'the workbook was not read';

const problem = {
  protected: () =>
    fileProblem(
      'the workbook is protected with a password, so it cannot be read. Open it in Excel, remove the password (File → Info → Protect Workbook → Encrypt with Password, and clear it), save it and load it again',
    ),
  oldExcel: () =>
    fileProblem(
      'this is an Excel 97–2003 workbook (.xls), which is not read. Open it in Excel or LibreOffice and save it as an Excel workbook (.xlsx), or as CSV UTF-8',
    ),
  corrupt: () => fileProblem(`the file is damaged or not a complete Excel workbook: ${SAVE_AGAIN}`),
  notWorkbook: () =>
    fileProblem(
      `the file is a zip archive but not an Excel workbook (.xlsx): ${SAVE_AGAIN}, or as CSV UTF-8`,
    ),
  tooLarge: () =>
    fileProblem(
      `the file is larger than ${inMiB(XLSX_MAX_BYTES)}, the limit for an Excel workbook; give a larger data set as NDJSON`,
    ),
  bomb: () =>
    fileProblem(
      `the workbook unpacks to more than ${inMiB(MAX_UNCOMPRESSED)} or more than ${MAX_ENTRIES.toLocaleString('en')} parts, more than a sheet of one merit cycle takes; ${NOT_READ}. Save the sheet alone as a new workbook, or as CSV UTF-8`,
    ),
};

/** The employees of a workbook's sheet, as data set input (see employeesFromRows). */
export async function employeesFromXlsx(input: WorkbookInput, cycle: CsvCycle, readAs: ReadAs) {
  const { rows, earlier } = await readSheet(input, readAs);
  return employeesFromRows(rows, cycle, readAs, earlier);
}

interface Entry {
  name: string;
  raw: yauzl.Entry;
}

interface Sheet {
  name: string;
  state: string;
  /** The zip entry of its cells (xl/worksheets/sheetN.xml), if it is a worksheet. */
  path: string | undefined;
}

/** The rows of the chosen sheet, header first, and the problems of cells met. */
async function readSheet(
  input: WorkbookInput,
  readAs: ReadAs,
): Promise<{ rows: SheetRow[]; earlier: SheetProblem[] }> {
  const head =
    typeof input.workbook === 'string' ? await headOfFile(input.workbook) : input.workbook;
  if (typeof input.workbook === 'string') await checkWorkbookSize(input.workbook);
  else if (input.workbook.length > XLSX_MAX_BYTES) throw problem.tooLarge();
  const kind = workbookKindOf(head);
  if (kind === 'ole')
    throw (await isEncryptedPackage(input.workbook)) ? problem.protected() : problem.oldExcel();
  if (kind !== 'zip') throw problem.corrupt();
  const zip = await openZip(input.workbook);
  try {
    const { entries, parts, merges, booleans } = await checkedEntries(zip);
    if (!entries.has('[Content_Types].xml') || !entries.has('xl/workbook.xml')) {
      throw problem.notWorkbook();
    }
    const sheets = sheetsOf(
      parts.get('xl/workbook.xml') ?? '',
      parts.get('xl/_rels/workbook.xml.rels') ?? '',
    );
    const sheet = chosenSheet(sheets, input.sheet);
    if (sheet.path === undefined || !entries.has(sheet.path)) {
      throw fileProblem(
        `the sheet "${sheet.name}" holds no table of cells (it is a chart, or the workbook is damaged); choose another sheet`,
      );
    }
    readAs.workbook = sheet.name;
    const order = [
      '[Content_Types].xml',
      '_rels/.rels',
      'xl/_rels/workbook.xml.rels',
      'xl/workbook.xml',
      'xl/styles.xml',
      'xl/sharedStrings.xml',
      sheet.path,
    ];
    const stream = copiedEntries(
      zip,
      order.flatMap((name) => {
        const entry = entries.get(name);
        return entry ? [entry] : [];
      }),
      !entries.has('xl/sharedStrings.xml'),
    );
    const booleanFormulas = booleans.get(sheet.path) ?? new Set<string>();
    const read = await rowsOf(stream, readAs, booleanFormulas).finally(() => stream.destroy());
    const earlier = [...read.problems, ...mergedHeader(merges.get(sheet.path) ?? [], read.rows)];
    // Every row as wide as the widest: a value right of the named columns is in a column
    // of its own, named by its letter, which the header check refuses (or ignores).
    const width = Math.max(...read.rows.map((row) => row.fields.length));
    const rows = read.rows.map((row, index) => ({
      line: row.line,
      fields: Array.from({ length: width }, (_, column) =>
        index === 0
          ? row.fields[column]?.trim() || columnLetters(column)
          : (row.fields[column] ?? null),
      ),
    }));
    return { rows, earlier };
  } finally {
    zip.close();
  }
}

function openZip(workbook: string | Buffer): Promise<yauzl.ZipFile> {
  const options = { lazyEntries: true, autoClose: false, validateEntrySizes: true };
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, zip?: yauzl.ZipFile) => {
      if (error || !zip) reject(problem.corrupt());
      else resolve(zip);
    };
    if (typeof workbook === 'string') yauzl.open(workbook, options, done);
    else yauzl.fromBuffer(workbook, options, done);
  });
}

/**
 * Every entry of the zip, checked: at most MAX_ENTRIES, none encrypted, stored or deflated,
 * at most MAX_UNCOMPRESSED bytes declared in all and inflated in all (counted as they are
 * inflated). The workbook's sheet list and relationships are kept as text, and each
 * worksheet's merged cells (`<mergeCell ref="A1:B1"/>`) and the addresses of its formula
 * cells of a yes-or-no result (`<c r="H2" t="b"><f>TRUE()</f><v>1</v></c>`: LibreOffice
 * saves every TRUE and FALSE cell so), whose result exceljs's streaming reader gives as the
 * number 1 or 0.
 */
async function checkedEntries(zip: yauzl.ZipFile) {
  if (zip.entryCount > MAX_ENTRIES) throw problem.bomb();
  const entries = new Map<string, Entry>();
  const parts = new Map<string, string>();
  const merges = new Map<string, string[]>();
  const booleans = new Map<string, Set<string>>();
  let declared = 0;
  let inflated = 0;
  const list = await new Promise<yauzl.Entry[]>((resolve, reject) => {
    const all: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      all.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(all));
    zip.once('error', () => reject(problem.corrupt()));
    zip.readEntry();
  });
  for (const entry of list) {
    if ((entry.generalPurposeBitFlag & 1) !== 0) throw problem.protected();
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) throw problem.corrupt();
    declared += entry.uncompressedSize;
    if (declared > MAX_UNCOMPRESSED) throw problem.bomb();
    entries.set(entry.fileName, { name: entry.fileName, raw: entry });
  }
  for (const { name, raw } of entries.values()) {
    const keep = name === 'xl/workbook.xml' || name === 'xl/_rels/workbook.xml.rels';
    const sheet = /^xl\/worksheets\/sheet\d+\.xml$/.test(name);
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let carry = '';
    const found: string[] = [];
    const booleanCells = new Set<string>();
    const stream = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(raw, (error, stream) =>
        error || !stream ? reject(problem.corrupt()) : resolve(stream),
      ),
    );
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        inflated += chunk.length;
        if (inflated > MAX_UNCOMPRESSED) throw problem.bomb();
        if (keep) {
          keptBytes += chunk.length;
          if (keptBytes > MAX_PART) throw problem.corrupt();
          kept.push(chunk);
        }
        if (sheet) {
          // Merged cells are listed after the rows; a tag cut by a chunk's end is read whole
          // with the next chunk.
          const text = carry + chunk.toString('latin1');
          for (const match of text.matchAll(/<mergeCell\s+ref="([A-Z]+\d+:[A-Z]+\d+)"/g)) {
            if (match[1]) found.push(match[1]);
          }
          for (const [, attributes = ''] of text.matchAll(/<c\s([^>]*)>\s*<f[\s>]/g)) {
            const address = /\br="([A-Z]+\d+)"/.exec(attributes)?.[1];
            if (address !== undefined && /\bt="b"/.test(attributes)) booleanCells.add(address);
          }
          carry = text.slice(-200);
        }
      }
    } catch (error) {
      stream.destroy();
      if ((error as { problems?: unknown }).problems !== undefined) throw error;
      // yauzl: an entry that inflates to other than it declares, or a broken deflate stream.
      throw /too many bytes/i.test(String(error)) ? problem.bomb() : problem.corrupt();
    }
    if (keep) parts.set(name, Buffer.concat(kept).toString('utf8'));
    if (sheet) {
      merges.set(name, [...new Set(found)]);
      booleans.set(name, booleanCells);
    }
  }
  return { entries, parts, merges, booleans };
}

/** The sheets of the workbook, in its order, with the entry of each one's cells. */
function sheetsOf(workbookXml: string, relsXml: string): Sheet[] {
  const targets = new Map<string, string>();
  for (const [tag] of relsXml.matchAll(/<(?:\w+:)?Relationship\b[^>]*>/g)) {
    const id = attribute(tag, 'Id');
    const target = attribute(tag, 'Target');
    if (id !== undefined && target !== undefined) {
      targets.set(id, target.startsWith('/') ? target.slice(1) : `xl/${target}`);
    }
  }
  const sheets: Sheet[] = [];
  for (const [tag] of workbookXml.matchAll(/<(?:\w+:)?sheet\b[^>]*>/g)) {
    const name = attribute(tag, 'name');
    const id = attribute(tag, 'r:id') ?? attribute(tag, 'id');
    if (name === undefined) continue;
    const path = id === undefined ? undefined : targets.get(id);
    sheets.push({
      name,
      state: attribute(tag, 'state') ?? 'visible',
      path: path !== undefined && /^xl\/worksheets\/sheet\d+\.xml$/.test(path) ? path : undefined,
    });
  }
  return sheets;
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name.replace(':', '\\:')}="([^"]*)"`).exec(tag);
  return match?.[1] === undefined ? undefined : xmlText(match[1]);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const xmlText = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) =>
    name.startsWith('#x') || name.startsWith('#X')
      ? String.fromCodePoint(Number.parseInt(name.slice(2), 16))
      : name.startsWith('#')
        ? String.fromCodePoint(Number(name.slice(1)))
        : (ENTITIES[name] ?? whole),
  );

/** The sheet named (exactly, else in any letter case), or the first visible one. */
function chosenSheet(sheets: readonly Sheet[], name: string | undefined): Sheet {
  const names = sheets.map((sheet) => `"${sheet.name}"`).join(', ');
  if (name === undefined) {
    const first = sheets.find((sheet) => sheet.state === 'visible');
    if (!first)
      throw fileProblem(`the workbook has no visible sheet; choose a sheet by its name: ${names}`);
    return first;
  }
  const found =
    sheets.find((sheet) => sheet.name === name) ??
    sheets.find((sheet) => sheet.name.toLowerCase() === name.trim().toLowerCase());
  if (!found) {
    throw fileProblem(`the workbook has no sheet "${name}"; its sheets are ${names}`);
  }
  return found;
}

/** The sharedStrings part of a workbook without any text cell: empty. */
const NO_SHARED_STRINGS = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="0" uniqueCount="0"/>',
);
const NO_SHARED_STRINGS_CRC = 0x29a29d6e;

/** A local file header: the entry's name, method, CRC and sizes (no data descriptor). */
function localHeader(
  name: string,
  method: number,
  crc: number,
  compressed: number,
  size: number,
): Buffer {
  const fileName = Buffer.from(name, 'utf8');
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(0x0800, 6); // the name is UTF-8
  header.writeUInt16LE(method, 8);
  header.writeUInt32LE(crc >>> 0, 14);
  header.writeUInt32LE(compressed, 18);
  header.writeUInt32LE(size, 22);
  header.writeUInt16LE(fileName.length, 26);
  return Buffer.concat([header, fileName]);
}

/**
 * A zip stream of `entries` in this order, each copied as stored (its compressed bytes
 * as they are, its sizes and CRC from the central directory), and an empty sharedStrings
 * part where the workbook has none; then the end of the central directory.
 */
function copiedEntries(zip: yauzl.ZipFile, entries: readonly Entry[], addSharedStrings: boolean) {
  const out = new PassThrough();
  void (async () => {
    for (const { name, raw } of entries) {
      if (addSharedStrings && name.startsWith('xl/worksheets/')) {
        out.write(
          localHeader(
            'xl/sharedStrings.xml',
            0,
            NO_SHARED_STRINGS_CRC,
            NO_SHARED_STRINGS.length,
            NO_SHARED_STRINGS.length,
          ),
        );
        out.write(NO_SHARED_STRINGS);
      }
      out.write(
        localHeader(
          name,
          raw.compressionMethod,
          raw.crc32,
          raw.compressedSize,
          raw.uncompressedSize,
        ),
      );
      const data = await new Promise<Readable>((resolve, reject) =>
        zip.openReadStream(raw, { decompress: false }, (error, stream) =>
          error || !stream ? reject(error) : resolve(stream),
        ),
      );
      for await (const chunk of data as AsyncIterable<Buffer>) {
        if (!out.write(chunk)) {
          await new Promise((resolve) => {
            out.once('drain', resolve);
            out.once('close', resolve);
          });
        }
        // The reader stopped (a problem, or the row limit): nothing more is copied.
        if (out.destroyed) {
          data.destroy();
          return;
        }
      }
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    out.end(end);
  })().catch((error: unknown) => out.destroy(error as Error));
  return out;
}

/**
 * The sheet's rows, as the spreadsheet numbers them, each cell as text: a date cell as
 * YYYY-MM-DD, a number cell as its shortest decimal, a yes-or-no cell as true or false.
 * Blank rows are skipped (and so empty rows at the end); the first row with a value is the
 * header. At most CSV_MAX_ROWS rows below it and CSV_MAX_BYTES of text, as a CSV file.
 */
async function rowsOf(stream: Readable, readAs: ReadAs, booleanFormulas: ReadonlySet<string>) {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(stream, {
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    worksheets: 'emit',
    entries: 'ignore',
  });
  const rows: SheetRow[] = [];
  const problems: SheetProblem[] = [];
  let header: string[] | undefined;
  let text = 0;
  try {
    for await (const worksheet of reader) {
      for await (const row of worksheet) {
        const values = (row.values as unknown[]).slice(1);
        const fields: (string | null)[] = [];
        values.forEach((value, index) => {
          const cell = cellText(value, formulaResultOf(row.getCell(index + 1), booleanFormulas));
          if (typeof cell === 'object' && cell !== null) {
            problems.push({
              kind: cell.kind,
              row: row.number,
              column: header?.[index] ?? columnLetters(index),
              ...(cell.value !== undefined && { value: cell.value }),
            });
            fields[index] = null;
          } else fields[index] = cell;
        });
        if (!fields.some((field) => field !== null && field !== undefined && field !== ''))
          continue;
        for (let index = 0; index < fields.length; index++) fields[index] ??= null;
        while (fields.length > 0 && fields[fields.length - 1] === null) fields.pop();
        if (rows.length > CSV_MAX_ROWS) {
          throw fileProblem(
            `row ${row.number}: more than ${CSV_MAX_ROWS.toLocaleString('en')} rows, the limit for a spreadsheet import (one merit cycle); give a larger data set as NDJSON`,
          );
        }
        text += fields.reduce((sum, field) => sum + (field?.length ?? 0) + 1, 0);
        if (text > CSV_MAX_BYTES) {
          throw fileProblem(
            `the sheet holds more than ${inMiB(CSV_MAX_BYTES)} of text, the limit for a spreadsheet import (one merit cycle); give a larger data set as NDJSON`,
          );
        }
        header ??= fields.map((field, index) => field?.trim() || columnLetters(index));
        rows.push({ line: row.number, fields });
      }
    }
  } catch (error) {
    if ((error as { problems?: unknown }).problems !== undefined) throw error;
    throw problem.corrupt();
  }
  if (rows.length === 0) {
    throw fileProblem(
      `the sheet "${readAs.workbook}" is empty: it needs a header row and one row per employee`,
    );
  }
  return { rows, problems };
}

type CellProblem = { kind: SheetProblem['kind']; value?: string };

/**
 * A formula cell's saved result, read from the cell: its value (exceljs's `cell.value`)
 * leaves out a result of 0 or false, and its streaming reader gives a yes-or-no result as
 * 1 or 0 (`booleanFormulas`: the addresses of such cells, from the sheet's XML).
 */
function formulaResultOf(
  cell: ExcelJS.Cell,
  booleanFormulas: ReadonlySet<string>,
): { result: unknown } | undefined {
  if (cell.type !== ExcelJS.ValueType.Formula) return undefined;
  const result: unknown = cell.result;
  if (typeof result === 'number' && booleanFormulas.has(cell.address)) {
    return { result: result !== 0 };
  }
  return { result };
}

/** A cell's value as the import reads it, or the problem it is. */
function cellText(value: unknown, formulaCell?: { result: unknown }): string | null | CellProblem {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    return decimalOfNumber(value) ?? { kind: 'cell-error', value: String(value) };
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return { kind: 'cell-error' };
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
  }
  const object = value as {
    richText?: { text?: string | null }[];
    formula?: string;
    sharedFormula?: string;
    result?: unknown;
    error?: string;
    text?: unknown;
  };
  if (Array.isArray(object.richText)) {
    return object.richText.map((run) => run.text ?? '').join('');
  }
  if (object.error !== undefined) return { kind: 'cell-error', value: object.error };
  if (object.formula !== undefined || object.sharedFormula !== undefined) {
    const formula = `=${object.formula ?? object.sharedFormula}`;
    const saved = formulaCell === undefined ? object.result : formulaCell.result;
    if (saved === undefined) return { kind: 'formula', value: formula };
    const result = cellText(saved);
    return result === null ? { kind: 'formula', value: formula } : result;
  }
  if (object.text !== undefined) return cellText(object.text);
  return { kind: 'cell-error' };
}

/** A (zero-based) column's letters: 0 → A, 26 → AA. */
function columnLetters(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return `(column ${letters})`;
}

/** Merged cells across columns of the header row: each a problem of its first column. */
function mergedHeader(refs: readonly string[], rows: readonly SheetRow[]): SheetProblem[] {
  const header = rows[0];
  if (!header) return [];
  const problems: SheetProblem[] = [];
  for (const ref of refs) {
    const match = /^([A-Z]+)(\d+):([A-Z]+)(\d+)$/.exec(ref);
    if (!match) continue;
    const [, fromColumn = '', fromRow = '', toColumn = '', toRow = ''] = match;
    if (fromColumn === toColumn) continue;
    if (Number(fromRow) > header.line || Number(toRow) < header.line) continue;
    problems.push({ kind: 'merged-cells', row: header.line, value: ref });
  }
  return problems;
}

/** Whether an OLE file is an encrypted Office document (it holds an EncryptedPackage). */
async function isEncryptedPackage(workbook: string | Buffer): Promise<boolean> {
  const name = Buffer.from('EncryptedPackage', 'utf16le');
  if (typeof workbook !== 'string') return workbook.includes(name);
  let carry = Buffer.alloc(0);
  const handle = await openFile(workbook, 'r');
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: 64 * 1024 })) {
      const bytes = Buffer.concat([carry, chunk as Buffer]);
      if (bytes.includes(name)) return true;
      carry = bytes.subarray(-name.length);
    }
  } finally {
    await handle.close();
  }
  return false;
}

/** The size check of a workbook file (standard input is counted as it is read). */
export async function checkWorkbookSize(path: string): Promise<void> {
  const handle = await openFile(path, 'r');
  try {
    if ((await handle.stat()).size > XLSX_MAX_BYTES) throw problem.tooLarge();
  } finally {
    await handle.close();
  }
}
