// `compplan export`: pages from the API (through @compplan/client, which paces itself so
// that a long export meets no 429) to CSV, NDJSON or JSON, one page at a time, so memory
// stays flat however long the list. Writing to a file keeps a small state file beside it
// (FILE.export-state.json) that says how many bytes of FILE are complete pages and which
// cursor comes next; `--resume` cuts FILE back to that point and carries on from there.
//
// With `delta`, the pages are those of a delta walk (docs/delta-sync.md): the changes
// since a deltaToken (everything without one), removals as rows with `removed` true; the
// run returns the walk's new deltaToken, which the caller keeps (delta-state.ts) only once
// everything is written.
import {
  accessSync,
  constants,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import {
  type CompplanClient,
  isRemoved,
  type MeritCycleEmployee,
  type MeritCycleStatus,
} from '@compplan/client';
import { exportInOneDownload } from './bulk.js';
import {
  columnName,
  columnsHeader,
  csvRow,
  EMPLOYEE_COLUMNS,
  employeeRowWriter,
  forEachColumnCell,
  OTHER_COLUMNS,
  orderColumns,
} from './csv.js';

export const EXPORT_KINDS = ['merit-cycles', 'employees', 'exchange-rates'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const EXPORT_FORMATS = ['csv', 'ndjson', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface MeritCycleExportFilters {
  status?: MeritCycleStatus;
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
}

export interface ExportRequest {
  kind: ExportKind;
  format: ExportFormat;
  /** The merit cycle, for employees and exchange rates. */
  cycle?: string;
  filters?: MeritCycleExportFilters;
  /** Items per request, 1–100. */
  pageSize: number;
  /** At most this many rows in all. */
  max?: number;
  /** UTF-8 byte order mark before CSV, so that spreadsheets read UTF-8 as UTF-8. */
  bom: boolean;
  /** Changes only (merit-cycles, employees): the pages of a delta walk. */
  delta?: boolean;
}

export interface ExportProgress {
  rows: number;
  /** Pages read; of one bulk download, the pieces of about 1 MiB written. */
  pages: number;
  done: boolean;
  /** Read in one bulk download rather than page by page. */
  oneDownload?: boolean;
}

/** A page as the export writes it; a delta's last page also has the walk's deltaToken. */
interface ExportPage {
  data: unknown[];
  nextCursor: string | null;
  deltaToken?: string | null;
}

export class ExportError extends Error {
  override name = 'ExportError';
}

type Row = Record<string, unknown>;

/** What the state file remembers between runs. */
interface ExportState {
  version: 1;
  request: ExportRequest;
  /** Bytes of the output that hold complete pages. */
  bytes: number;
  rows: number;
  pages: number;
  /** Where the next page starts; undefined before the first page. */
  nextCursor: string | null | undefined;
  /** The CSV header, fixed with the first page. */
  header: string[] | undefined;
  /** Written by one bulk download, which a resumed run starts again. */
  bulk?: true;
}

/** The state of an export that has written nothing yet. */
function newState(request: ExportRequest): ExportState {
  return {
    version: 1,
    request,
    bytes: 0,
    rows: 0,
    pages: 0,
    nextCursor: undefined,
    header: undefined,
  };
}

const MERIT_CYCLE_COLUMNS = ['id', 'name', 'status', 'startDate', 'endDate', 'createdDate'];
/** A delta's removals: the row of a removed item has its id and this column, true. */
const REMOVED_COLUMN = 'removed';
const EXCHANGE_RATE_COLUMNS = ['base', 'currency', 'rate'];

export const stateFileOf = (output: string) => `${output}.export-state.json`;

/**
 * The pages of what is exported, from `cursor` on (undefined: from the start); of a delta,
 * from `deltaToken` (undefined: everything).
 */
async function* pagesOf(
  client: CompplanClient,
  request: ExportRequest,
  cursor: string | undefined,
  max: number | undefined,
  signal: AbortSignal | undefined,
  deltaToken: string | undefined,
): AsyncGenerator<ExportPage> {
  const common = { limit: request.pageSize, max, nextCursor: cursor, signal };
  if (request.delta) {
    const options = { limit: request.pageSize, signal, ...(deltaToken ? { deltaToken } : {}) };
    yield* request.kind === 'employees'
      ? client.employees.delta(request.cycle ?? '', options).pages()
      : client.meritCycles.delta(options).pages();
  } else if (request.kind === 'merit-cycles') {
    const { status, ...startDate } = request.filters ?? {};
    yield* client.meritCycles.list({ ...common, status, startDate }).pages();
  } else if (request.kind === 'employees') {
    yield* client.employees.list(request.cycle ?? '', common).pages();
  } else {
    const { base, rates } = await client.meritCycles.exchangeRates(request.cycle ?? '', { signal });
    const rows = Object.entries(rates).map(([currency, rate]) => ({ base, currency, rate }));
    yield { data: rows.slice(0, max ?? rows.length), nextCursor: null };
  }
}

/**
 * The text of one page in the chosen format. The CSV header is fixed with the first page:
 * for employees from the cycle's column schema (`columns`: every column of the cycle, even
 * one that no employee of the first page has), else from the first page's rows.
 */
function render(state: ExportState, items: readonly unknown[], columns?: string[]): string {
  const { format, kind } = state.request;
  if (format === 'ndjson') return items.map((item) => `${JSON.stringify(item)}\n`).join('');
  if (format === 'json') {
    return items
      .map((item, index) => `${state.rows + index === 0 ? '' : ',\n'}${JSON.stringify(item)}`)
      .join('');
  }
  const rows = items as readonly Row[];
  let text = '';
  if (!state.header) {
    const base =
      kind === 'merit-cycles'
        ? MERIT_CYCLE_COLUMNS
        : kind === 'employees'
          ? EMPLOYEE_COLUMNS
          : EXCHANGE_RATE_COLUMNS;
    const seen = rows
      .flatMap((row) => cellNames(kind, row))
      .filter((name) => !base.includes(name) && name !== REMOVED_COLUMN);
    state.header = [
      ...base,
      ...(state.request.delta ? [REMOVED_COLUMN] : []),
      ...(columns ?? orderColumns(seen)),
    ];
    if (kind === 'employees') state.header.push(OTHER_COLUMNS);
    text += `${state.request.bom ? '\uFEFF' : ''}${csvRow(state.header)}`;
  }
  const header = state.header;
  // An employee is flattened under the header as the bulk download's CSV flattens it; a
  // removal (id, removed) and any other row is its values under the header.
  const employeeRow = kind === 'employees' ? employeeRowWriter(header) : undefined;
  for (const row of rows) {
    text +=
      employeeRow && !isRemoved(row)
        ? employeeRow(row as unknown as MeritCycleEmployee)
        : csvRow(header.map((name) => row[name]));
  }
  return text;
}

/** The names of a row's cells: an employee's flattened columns, else the row's keys. */
function cellNames(kind: ExportKind, row: Row): string[] {
  if (kind !== 'employees' || isRemoved(row)) return Object.keys(row);
  const names: string[] = [];
  forEachColumnCell((row as unknown as MeritCycleEmployee).columns, (key, part) => {
    names.push(columnName(key, part));
  });
  return names;
}

const opening = (format: ExportFormat) => (format === 'json' ? '[\n' : '');
const closing = (format: ExportFormat, rows: number) =>
  format === 'json' ? `${rows > 0 ? '\n' : ''}]\n` : '';

/** Where the text goes: a file (with its state beside it) or a stream such as stdout. */
interface Sink {
  write(text: string, state: ExportState): Promise<void>;
  finish(state: ExportState): Promise<void>;
}

function sameRequest(a: ExportRequest, b: ExportRequest): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The saved state of an export to `output`, if there is one. */
function savedState(stateFile: string): ExportState | undefined {
  return existsSync(stateFile)
    ? (JSON.parse(readFileSync(stateFile, 'utf8')) as ExportState)
    : undefined;
}

/** What is at `path`; undefined when nothing is (or a file stands where a folder should). */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Why `output` cannot be written as a file, in words; undefined when it can. Checked before
 * the first request, so that an export is not refused only once its first page has come.
 */
function unwritable(output: string): string | undefined {
  const found = statOf(output);
  if (found?.isDirectory()) return 'it is a folder';
  const folder = dirname(output);
  let ancestor = folder;
  let stats = statOf(ancestor);
  // The nearest thing that exists on the way up (the root, or `.`, always does).
  while (!stats) {
    ancestor = dirname(ancestor);
    stats = statOf(ancestor);
  }
  if (!stats.isDirectory()) return `${ancestor} is a file, not a folder`;
  if (ancestor !== folder) return `the folder ${folder} does not exist`;
  try {
    accessSync(found ? output : folder, constants.W_OK);
  } catch {
    return found ? 'no permission to write it' : `no permission to write in ${folder}`;
  }
  return undefined;
}

/** A failure of the file system (a full disk, …) as one line that names the file. */
function writeFailure(output: string, error: unknown): unknown {
  const { code, message } = error as NodeJS.ErrnoException;
  return typeof code === 'string' ? new ExportError(`cannot write ${output}: ${message}`) : error;
}

/**
 * A file and its state file. A new export creates neither until its first page has come
 * (or the export is complete and empty): one that fails before that (a server that cannot
 * be reached, a bad key, Ctrl-C) leaves nothing behind, and an existing file that --force
 * would overwrite is untouched. A state file that records no page (left by a run that
 * stopped in between) holds nothing worth resuming: a run without --resume starts afresh.
 */
async function fileSink(
  output: string,
  request: ExportRequest,
  options: { resume: boolean; force: boolean },
): Promise<{ sink: Sink; state: ExportState }> {
  const problem = unwritable(output);
  if (problem) throw new ExportError(`cannot write ${output}: ${problem}`);
  const stateFile = stateFileOf(output);
  const saved = savedState(stateFile);
  let state: ExportState;
  let handle: FileHandle | undefined;
  const saveState = (current: ExportState) => {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify(current));
    renameSync(`${stateFile}.tmp`, stateFile);
  };
  if (options.resume) {
    if (!saved) {
      throw new ExportError(
        `nothing to resume: ${stateFile} does not exist (the export of ${output} finished, or never started)`,
      );
    }
    if (!sameRequest(saved.request, request)) {
      throw new ExportError(
        `${output} was started as a different export (${JSON.stringify(saved.request)}); resume it with the same options`,
      );
    }
    if (saved.bulk) {
      // A bulk download has no place to continue from: it is made again, from the start.
      state = newState(request);
    } else {
      state = saved;
      handle = await open(output, 'r+').catch((error: unknown) => {
        throw writeFailure(output, error);
      });
      // Whatever follows the last complete page is a page cut short: it is written again.
      await handle.truncate(state.bytes);
    }
  } else {
    const nothingWritten = saved?.pages === 0;
    if (saved && !nothingWritten && !options.force) {
      throw new ExportError(
        `${output} is an unfinished export: add --resume to continue it, or --force to start again`,
      );
    }
    if (existsSync(output) && !nothingWritten && !options.force) {
      throw new ExportError(`${output} exists: add --force to overwrite it`);
    }
    state = newState(request);
  }
  let position = state.bytes;
  /** The open file; a new export's is created here, with its opening and its state. */
  const file = async (): Promise<FileHandle> => {
    if (handle) return handle;
    handle = await open(output, 'w');
    const start = Buffer.from(opening(request.format), 'utf8');
    await handle.write(start, 0, start.length, 0);
    position = start.length;
    state.bytes = position;
    saveState(state);
    return handle;
  };
  /** Runs `work` on the file; what the file system refuses is one line naming the file. */
  const onFile = (work: () => Promise<void>) =>
    work().catch((error: unknown) => {
      throw writeFailure(output, error);
    });
  return {
    state,
    sink: {
      write: (text, current) =>
        onFile(async () => {
          const target = await file();
          const buffer = Buffer.from(text, 'utf8');
          await target.write(buffer, 0, buffer.length, position);
          position += buffer.length;
          current.bytes = position;
          saveState(current);
        }),
      finish: (current) =>
        onFile(async () => {
          const target = await file();
          const end = Buffer.from(closing(request.format, current.rows), 'utf8');
          await target.write(end, 0, end.length, position);
          await target.close();
          rmSync(stateFile, { force: true });
        }),
    },
  };
}

function streamSink(stream: Writable, request: ExportRequest): { sink: Sink; state: ExportState } {
  // A reader that stops early (`| head`) closes the pipe: the write callback reports it
  // (EPIPE), and the stream's 'error' event must not also crash the process.
  stream.on('error', () => {});
  const write = (text: string) =>
    new Promise<void>((resolve, reject) => {
      stream.write(text, (error) => (error ? reject(error) : resolve()));
    });
  const state = newState(request);
  let started = false;
  return {
    state,
    sink: {
      async write(text) {
        if (!started) {
          started = true;
          await write(opening(request.format));
        }
        await write(text);
      },
      async finish(current) {
        if (!started) await write(opening(request.format));
        await write(closing(request.format, current.rows));
      },
    },
  };
}

export interface RunExportOptions {
  /**
   * false: page through the list even where the whole of a cycle's employees could come
   * in one bulk download (the default for an export of employees without --max or --delta).
   */
  bulk?: boolean;
  /** A delta export: the deltaToken of the previous one (undefined: everything). */
  deltaToken?: string;
  /** A file to write (resumable); standard output or another stream when absent. */
  output?: string;
  stream?: Writable;
  resume?: boolean;
  force?: boolean;
  onProgress?: (progress: ExportProgress) => void;
  signal?: AbortSignal;
}

/**
 * Runs one export to the end (or to `max` rows); returns how many rows it wrote in all,
 * and for a delta the deltaToken of the walk, once everything is written.
 */
export async function runExport(
  client: CompplanClient,
  request: ExportRequest,
  options: RunExportOptions,
): Promise<ExportProgress & { deltaToken?: string }> {
  let deltaToken: string | undefined;
  const { sink, state } = options.output
    ? await fileSink(options.output, request, {
        resume: options.resume === true,
        force: options.force === true,
      })
    : streamSink(options.stream ?? process.stdout, request);
  const report = (done: boolean) =>
    options.onProgress?.({
      rows: state.rows,
      pages: state.pages,
      done,
      ...(state.bulk ? { oneDownload: true } : {}),
    });
  report(false);
  const whole = request.kind === 'employees' && !request.delta && request.max === undefined;
  if (whole && options.bulk !== false && state.nextCursor === undefined) {
    state.bulk = true;
    const downloaded = await exportInOneDownload(
      client,
      request.cycle ?? '',
      request.format,
      request.bom,
      {
        write: (text) => sink.write(text, state),
        progress(rows) {
          state.rows = rows;
          state.pages += 1;
          report(false);
        },
      },
      options.signal,
    );
    if (downloaded) state.nextCursor = null;
    else delete state.bulk;
  }
  if (state.nextCursor !== null) {
    // A new CSV of employees takes its header from the cycle's column schema.
    const columns =
      request.format === 'csv' && request.kind === 'employees' && !state.header
        ? columnsHeader(
            (await client.meritCycles.columns(request.cycle ?? '', { signal: options.signal }))
              .data,
          )
        : undefined;
    const remaining = request.max === undefined ? undefined : Math.max(0, request.max - state.rows);
    if (remaining !== 0) {
      for await (const page of pagesOf(
        client,
        request,
        state.nextCursor,
        remaining,
        options.signal,
        options.deltaToken,
      )) {
        if (page.deltaToken) deltaToken = page.deltaToken;
        const text = render(state, page.data, columns);
        state.rows += page.data.length;
        state.pages += 1;
        state.nextCursor = page.nextCursor;
        await sink.write(text, state);
        report(false);
      }
    }
    state.nextCursor = null;
  }
  await sink.finish(state);
  report(true);
  return {
    rows: state.rows,
    pages: state.pages,
    done: true,
    ...(deltaToken ? { deltaToken } : {}),
  };
}
