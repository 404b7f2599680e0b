// The two forms of a bulk download, made from the employees' stored texts a chunk at a
// time (docs/bulk-download.md):
// - NDJSON: one employee a line, exactly the object the list serves: the stored text as
//   it is, or without the key's hidden columns (hidden-columns.ts).
// - CSV: the export's layout (src/export/csv.ts): its header from the cycle's column
//   schema, each employee flattened to cells, RFC 4180, UTF-8 with a byte order mark
//   unless `bom=false`.
import type { ColumnDescription } from '../../columns/schema.js';
import {
  columnsHeader,
  csvRow,
  EMPLOYEE_COLUMNS,
  employeeCsvRow,
  flatEmployee,
  OTHER_COLUMNS,
} from '../../export/csv.js';
import { removeColumns, withoutColumnsOf } from '../employees/hidden-columns.js';
import { TEXT_SEPARATOR } from '../employees/repository.js';
import type { Employee } from '../employees/schema.js';

export const BULK_FORMATS = ['ndjson', 'csv'] as const;
export type BulkFormat = (typeof BULK_FORMATS)[number];

export const CONTENT_TYPES: Record<BulkFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

/** Turns a chunk of stored texts (joined by TEXT_SEPARATOR) into the download's bytes. */
export interface ChunkWriter {
  /** What comes before the first employee: the CSV header. */
  readonly head: Buffer;
  write(texts: Buffer): Buffer;
}

const NEWLINE = Buffer.from('\n');
const BOM = '\uFEFF';

/** NDJSON: each stored text on a line of its own. */
export function ndjsonWriter(hidden: readonly string[]): ChunkWriter {
  return {
    head: Buffer.alloc(0),
    write(texts) {
      if (hidden.length > 0) {
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
 * CSV under the header of the cycle's column schema (without the hidden columns), as the
 * export makes it, and the export's columns.other last.
 */
export function csvWriter(
  schema: readonly ColumnDescription[],
  hidden: readonly string[],
  bom: boolean,
): ChunkWriter {
  const header = [...EMPLOYEE_COLUMNS, ...columnsHeader(schema), OTHER_COLUMNS];
  const known = new Set(header);
  return {
    head: Buffer.from(`${bom ? BOM : ''}${csvRow(header)}`),
    write(texts) {
      let text = '';
      for (const stored of texts.toString('utf8').split(String.fromCharCode(TEXT_SEPARATOR))) {
        const employee = removeColumns(JSON.parse(stored) as Employee, hidden);
        text += employeeCsvRow(header, known, flatEmployee(employee));
      }
      return Buffer.from(text);
    },
  };
}
