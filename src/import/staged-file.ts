// A file uploaded in the web application (uploads.ts), checked or imported by the same
// loader as `compplan import` (load.ts, cycle-csv.ts): CSV read whole within its limit, an
// Excel workbook (told by its content) by xlsx.ts,
// JSON or NDJSON as the command reads them (source.ts) — in the server's own thread, where
// the command line reads them in a worker thread, so the rules, limits and messages are
// the same. `onRead` is told how many bytes have been read, for the page's progress.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { DatabaseHandle } from '../db/connect.js';
import { checkEmployeesCsv, importEmployeesCsv } from './cycle-csv.js';
import {
  type CheckedImport,
  checkRecords,
  type ImportSummary,
  importRecords,
  type LoadOptions,
} from './load.js';
import type { ImportRecord } from './records.js';
import type { ReadingChoices } from './sheet-reading.js';
import { readCsvBytes, recordsOfStream } from './source.js';
import type { UploadFormat } from './uploads.js';
import { headOfFile, workbookKindOf } from './workbook-kind.js';

export interface StagedFile {
  path: string;
  name: string;
  format: UploadFormat;
  cycleId?: string | undefined;
  /** For CSV: how the file writes dates, amounts, its encoding (sheet-reading.ts). */
  reading?: Partial<ReadingChoices> | undefined;
  /** For an Excel workbook: the sheet to read (absent: the first visible one). */
  sheet?: string | undefined;
}

type Options = LoadOptions & { organization: string; prune: boolean };

/** A check's outcome; for CSV with what the file was read as. */
export type CheckedFile = CheckedImport & { readAs?: readonly string[] };

export function checkStagedFile(
  database: DatabaseHandle,
  file: StagedFile,
  options: Options,
  onRead: (bytes: number) => void,
): Promise<CheckedFile> {
  return loadStagedFile<CheckedFile>(database, file, options, onRead, {
    csv: checkEmployeesCsv,
    records: checkRecords,
  });
}

export function importStagedFile(
  database: DatabaseHandle,
  file: StagedFile,
  options: Options,
  onRead: (bytes: number) => void,
): Promise<ImportSummary> {
  return loadStagedFile(database, file, options, onRead, {
    csv: importEmployeesCsv,
    records: importRecords,
  });
}

async function loadStagedFile<T>(
  database: DatabaseHandle,
  file: StagedFile,
  options: Options,
  onRead: (bytes: number) => void,
  load: {
    csv: typeof checkEmployeesCsv extends (...args: infer A) => unknown
      ? (...args: A) => Promise<T>
      : never;
    records: (
      database: DatabaseHandle,
      records: AsyncIterable<ImportRecord>,
      options: LoadOptions,
    ) => Promise<T>;
  },
): Promise<T> {
  if (file.format === 'csv') {
    // An Excel workbook (told by its first bytes, or its name) is read where it is staged.
    const workbook =
      workbookKindOf(await headOfFile(file.path)) !== undefined || /\.xlsx$/i.test(file.name);
    const bytes = workbook
      ? { workbook: file.path, sheet: file.sheet }
      : await readCsvBytes(file.path);
    onRead(bytes instanceof Uint8Array ? bytes.length : (await stat(file.path)).size);
    return load.csv(database, bytes, {
      ...options,
      org: options.organization,
      cycle: file.cycleId ?? '',
      reading: file.reading,
    });
  }
  return load.records(
    database,
    await recordsOfStream(file.name, counted(file.path, onRead)),
    options,
  );
}

/** The file's bytes, in the command line's chunks, each counted as it is read. */
async function* counted(path: string, onRead: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  let read = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    read += (chunk as Buffer).length;
    onRead(read);
    yield chunk as Buffer;
  }
}
