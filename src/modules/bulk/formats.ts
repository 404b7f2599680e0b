// The forms of a bulk download, made from the employees' stored texts a chunk at a time
// (docs/bulk-download.md):
// - NDJSON, `shape=nested` (its default): one employee a line, exactly the object the list
//   serves: the stored text as it is, or without the key's hidden columns
//   (hidden-columns.ts).
// - NDJSON, `shape=flat`: one flat object a line, the properties of export/flat-row.ts.
// - CSV, `shape=flat` (its default): the flat row of export/flat-row.ts as CSV, for
//   analysts; an employee's line as the import stored it when it fits (export/flat-line.ts).
// - CSV, `shape=nested`: the export's layout (src/export/csv.ts), what `compplan export`
//   writes and the CSV import reads back: its header from the cycle's column schema, each
//   employee flattened to dotted names.
// CSV is RFC 4180, UTF-8 with a byte order mark unless `bom=false`. All but the nested
// NDJSON are made in a worker thread (csv-worker.ts).

import { type HiddenColumns, hidesNothing } from '../../columns/hidden.js';
import type { ColumnDescription } from '../../columns/schema.js';
import { columnsHeader, csvRow, EMPLOYEE_COLUMNS, OTHER_COLUMNS } from '../../export/csv.js';
import { JSON_TEXT_START } from '../../export/flat-line.js';
import { type FlatLayout, flatHeader } from '../../export/flat-row.js';
import { withoutColumnsOf } from '../employees/hidden-columns.js';
import { TEXT_SEPARATOR } from '../employees/repository.js';
import type { CsvWorkers } from './csv-worker.js';

export const BULK_FORMATS = ['ndjson', 'csv'] as const;
export type BulkFormat = (typeof BULK_FORMATS)[number];

export const BULK_SHAPES = ['nested', 'flat'] as const;
export type BulkShape = (typeof BULK_SHAPES)[number];

/** A format's shape when none is asked for: NDJSON the list's objects, CSV the flat row. */
export const DEFAULT_SHAPES: Record<BulkFormat, BulkShape> = { ndjson: 'nested', csv: 'flat' };

export const CONTENT_TYPES: Record<BulkFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

/** Turns a chunk of stored texts (joined by TEXT_SEPARATOR) into the download's bytes. */
export interface ChunkWriter {
  /** What comes before the first employee: the CSV header. */
  readonly head: Buffer;
  /**
   * How many chunks may be in its hands at once: more than one when it answers later
   * (a conversion in a worker thread), so that the next chunk is read meanwhile.
   */
  readonly ahead: number;
  /** The chunk's bytes; the texts are the writer's to edit or hand over. */
  write(texts: Buffer): Buffer | Promise<Buffer>;
}

const NEWLINE = Buffer.from('\n');
const EMPTY = Buffer.alloc(0);
const BOM = '\uFEFF';

/** NDJSON: each stored text on a line of its own. */
export function ndjsonWriter(hidden: HiddenColumns): ChunkWriter {
  return {
    head: EMPTY,
    // Written at once: nothing is read ahead of the client.
    ahead: 1,
    write(texts) {
      if (!hidesNothing(hidden)) {
        const lines = texts.toString('utf8').split(String.fromCharCode(TEXT_SEPARATOR));
        return Buffer.from(`${lines.map((text) => withoutColumnsOf(text, hidden)).join('\n')}\n`);
      }
      // The texts are ours to edit: the separators become line ends where they are.
      for (
        let at = texts.indexOf(TEXT_SEPARATOR);
        at !== -1;
        at = texts.indexOf(TEXT_SEPARATOR, at + 1)
      ) {
        texts[at] = 0x0a;
      }
      return Buffer.concat([texts, NEWLINE]);
    },
  };
}

/**
 * The flat row (export/flat-row.ts) as CSV under its header, or as NDJSON; made in a worker thread
 * (csv-worker.ts) while the next chunk is read. A CSV chunk of stored lines alone
 * (export/flat-line.ts) is joined here: there is nothing to convert.
 */
export function flatWriter(
  layout: FlatLayout,
  form: BulkFormat,
  bom: boolean,
  workers: CsvWorkers,
): ChunkWriter {
  return {
    head: form === 'csv' ? Buffer.from(`${bom ? BOM : ''}${csvRow(flatHeader(layout))}`) : EMPTY,
    ahead: 2,
    write: (texts) =>
      (form === 'csv' ? storedLinesOf(texts) : undefined) ??
      workers.convert({
        texts,
        separator: TEXT_SEPARATOR,
        rows: { shape: 'flat', form, layout },
      }),
  };
}

/**
 * A chunk whose texts are all stored flat lines (none a JSON text, which begins with `{`):
 * the lines one after the other, the separators taken out in place. Undefined, the chunk
 * untouched, when some text must be converted.
 */
function storedLinesOf(texts: Buffer): Buffer | undefined {
  if (texts[0] === JSON_TEXT_START) return undefined;
  for (
    let at = texts.indexOf(TEXT_SEPARATOR);
    at !== -1;
    at = texts.indexOf(TEXT_SEPARATOR, at + 1)
  ) {
    if (texts[at + 1] === JSON_TEXT_START) return undefined;
  }
  let length = 0;
  for (let start = 0; start <= texts.length; ) {
    const found = texts.indexOf(TEXT_SEPARATOR, start);
    const end = found === -1 ? texts.length : found;
    texts.copyWithin(length, start, end);
    length += end - start;
    start = end + 1;
  }
  return texts.subarray(0, length);
}

/**
 * The nested CSV: under the header of the cycle's column schema (without the hidden columns), as the
 * export makes it, and the export's columns.other last; made in a worker thread
 * (csv-worker.ts) while the next chunk is read.
 */
export function csvWriter(
  schema: readonly ColumnDescription[],
  hidden: HiddenColumns,
  bom: boolean,
  workers: CsvWorkers,
): ChunkWriter {
  const header = [...EMPLOYEE_COLUMNS, ...columnsHeader(schema), OTHER_COLUMNS];
  return {
    head: Buffer.from(`${bom ? BOM : ''}${csvRow(header)}`),
    // One chunk converted while the next is read; memory holds a few chunks at most.
    ahead: 2,
    write: (texts) =>
      workers.convert({
        texts,
        separator: TEXT_SEPARATOR,
        rows: { shape: 'nested', header, hidden },
      }),
  };
}
