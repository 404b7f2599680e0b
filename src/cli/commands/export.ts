// `compplan export`: merit cycles, a cycle's employees or its exchange rates, from any
// compplan server (server-address.ts; --key or COMPPLAN_API_KEY), to CSV, NDJSON or JSON. A thin
// layer over @compplan/client and src/export; see docs/export.md.
import { extname } from 'node:path';
import { CompplanClient, CompplanError } from '@compplan/client';
import { type Command, Option } from 'commander';
import { readDeltaToken, writeDeltaToken } from '../../export/delta-state.js';
import {
  EXPORT_FORMATS,
  EXPORT_KINDS,
  ExportError,
  type ExportFormat,
  type ExportKind,
  type ExportProgress,
  type ExportRequest,
  runExport,
} from '../../export/export.js';
import { MERIT_CYCLE_STATUSES } from '../../import/schema.js';
import type { MeritCycleStatus } from '../../modules/merit-cycles/schema.js';
import { CliError, EXIT_USAGE } from '../errors.js';
import { interruptible } from '../interruption.js';
import {
  BASE_URL_VARIABLE,
  baseUrlHelp,
  describeAddress,
  type ServerAddress,
  serverAddress,
} from '../server-address.js';

// The largest page the API serves: the fewest requests, so the fastest export within the
// rate limit.
const DEFAULT_PAGE_SIZE = 100;

interface ExportCommandOptions {
  cycle?: string;
  format?: ExportFormat;
  output?: string;
  baseUrl?: string;
  key?: string;
  status?: MeritCycleStatus;
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
  pageSize: string;
  max?: string;
  resume?: boolean;
  force?: boolean;
  bom: boolean;
  bulk: boolean;
  progress?: boolean;
  delta?: string;
}

function wholeNumber(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new CliError(
      `${name} must be a whole number from ${min} to ${max}, got "${text}"`,
      EXIT_USAGE,
    );
  }
  return Number(text);
}

function formatOf(options: ExportCommandOptions): ExportFormat {
  if (options.format) return options.format;
  const extension = options.output ? extname(options.output).slice(1).toLowerCase() : '';
  return (EXPORT_FORMATS as readonly string[]).includes(extension)
    ? (extension as ExportFormat)
    : 'csv';
}

/** A one-line progress display on a terminal, redrawn in place; nothing otherwise. */
function progressLine(kind: ExportKind, stream: NodeJS.WriteStream) {
  const started = Date.now();
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let frame = 0;
  return (progress: ExportProgress) => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? (progress.pages / seconds).toFixed(1) : '0.0';
    const icon = progress.done ? '✔' : frames[frame++ % frames.length];
    const clock = `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;
    const how = progress.oneDownload
      ? 'in one download'
      : `${progress.pages} pages, ${rate} pages/s`;
    stream.write(
      `\r\u001b[K${icon} ${kind}: ${progress.rows.toLocaleString('en')} rows, ${how}, ${clock}${progress.done ? '\n' : ''}`,
    );
  };
}

/** SDK errors as one line for the person at the terminal. */
function describeFailure(error: unknown, server: ServerAddress): string | undefined {
  if (!(error instanceof CompplanError)) return undefined;
  // A server named on purpose may be the wrong one; one derived from PORT and HOST may
  // not be the one meant at all. A key or a cycle the server does not know may be one of
  // another server, so those name the server asked too.
  const wrongServer =
    server.source === '--base-url' || server.source === BASE_URL_VARIABLE
      ? `is ${server.url} the right ${server.source}?`
      : `is ${describeAddress(server)} the server you mean? name it with --base-url or ${BASE_URL_VARIABLE}`;
  const hints: Record<string, string> = {
    AuthenticationError: `check --key or COMPPLAN_API_KEY; ${wrongServer}`,
    DeltaTokenExpiredError: 'remove the --delta state file to export everything again',
    NotFoundError: `check --cycle; ${wrongServer}`,
    ConnectionError: wrongServer,
    TimeoutError: wrongServer,
  };
  const hint = hints[error.name];
  return hint ? `${error.message} (${hint})` : error.message;
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      "Export merit cycles, a merit cycle's employees or its exchange rates to CSV, NDJSON or JSON",
    )
    .addArgument(
      program
        .createArgument('<what>', 'what to export')
        .choices(EXPORT_KINDS as unknown as string[]),
    )
    .option('--cycle <id>', 'the merit cycle (for employees and exchange-rates)')
    .addOption(
      new Option(
        '--format <format>',
        'output format (default: from the --output extension, else csv)',
      ).choices(EXPORT_FORMATS as unknown as string[]),
    )
    .option('-o, --output <file>', 'write to this file (resumable); standard output when absent')
    .option('--base-url <url>', baseUrlHelp('the compplan server'))
    .option('--key <key>', 'the API key (default: COMPPLAN_API_KEY)')
    .addOption(
      new Option('--status <status>', 'merit-cycles: only this status').choices(
        MERIT_CYCLE_STATUSES as unknown as string[],
      ),
    )
    .option('--gt <date>', 'merit-cycles: starting after this date (YYYY-MM-DD)')
    .option('--gte <date>', 'merit-cycles: starting on or after this date')
    .option('--lt <date>', 'merit-cycles: starting before this date')
    .option('--lte <date>', 'merit-cycles: starting on or before this date')
    .option(
      '--page-size <n>',
      'items per request, 1–100 (when paging: see --no-bulk)',
      String(DEFAULT_PAGE_SIZE),
    )
    .option('--max <n>', 'stop after this many rows')
    .option('--resume', 'continue an interrupted export to --output where it stopped')
    .option('--force', 'overwrite --output, even an unfinished export')
    .option('--no-bom', 'CSV: no UTF-8 byte order mark (spreadsheets need it to read UTF-8)')
    .option(
      '--no-bulk',
      'employees: page through the list instead of the one bulk download (used by default when the server offers it, without --max or --delta)',
    )
    .option(
      '--delta <state-file>',
      'merit-cycles, employees: only the changes since the deltaToken in this file (everything when it does not exist yet), removals as rows with removed=true; the file gets the new token once all is written',
    )
    .option('--progress', 'show progress on standard error (default: only on a terminal)')
    .option('--no-progress', 'never show progress')
    .action(async (what: ExportKind, options: ExportCommandOptions) => {
      const apiKey = options.key ?? process.env.COMPPLAN_API_KEY;
      if (!apiKey)
        throw new CliError('an API key is needed: --key KEY or COMPPLAN_API_KEY', EXIT_USAGE);
      const server = serverAddress(options.baseUrl, process.env);
      if (what !== 'merit-cycles' && !options.cycle) {
        throw new CliError(`exporting ${what} needs --cycle ID`, EXIT_USAGE);
      }
      if (options.resume && !options.output) {
        throw new CliError(
          '--resume needs --output FILE: only a file export can be resumed',
          EXIT_USAGE,
        );
      }
      if (options.delta !== undefined) {
        if (what === 'exchange-rates') {
          throw new CliError(
            '--delta exports the changes of merit-cycles or employees',
            EXIT_USAGE,
          );
        }
        if (options.resume || options.max) {
          throw new CliError(
            '--delta cannot be combined with --resume or --max: a delta is exported whole (an interrupted one is exported again from the same token)',
            EXIT_USAGE,
          );
        }
      }
      const filters = Object.fromEntries(
        (['status', 'gt', 'gte', 'lt', 'lte'] as const)
          .filter((name) => options[name] !== undefined)
          .map((name) => [name, options[name]]),
      );
      if (what !== 'merit-cycles' && Object.keys(filters).length > 0) {
        throw new CliError(
          '--status, --gt, --gte, --lt and --lte filter merit-cycles only',
          EXIT_USAGE,
        );
      }
      if (options.delta !== undefined && Object.keys(filters).length > 0) {
        throw new CliError('a delta has no filters: it holds every change', EXIT_USAGE);
      }
      const request: ExportRequest = {
        kind: what,
        format: formatOf(options),
        ...(options.cycle ? { cycle: options.cycle } : {}),
        ...(what === 'merit-cycles' && options.delta === undefined ? { filters } : {}),
        pageSize: wholeNumber('--page-size', options.pageSize, 1, 100),
        ...(options.max
          ? { max: wholeNumber('--max', options.max, 0, Number.MAX_SAFE_INTEGER) }
          : {}),
        bom: options.bom,
        ...(options.delta !== undefined ? { delta: true } : {}),
      };
      const subject = { kind: what, ...(options.cycle ? { cycle: options.cycle } : {}) };
      let deltaToken: string | undefined;
      try {
        deltaToken =
          options.delta === undefined ? undefined : readDeltaToken(options.delta, subject);
      } catch (error) {
        if (error instanceof ExportError) throw new CliError(error.message, EXIT_USAGE);
        throw error;
      }
      const showProgress = options.progress ?? process.stderr.isTTY === true;
      let latest: ExportProgress = { rows: 0, pages: 0, done: false };
      const draw = showProgress ? progressLine(what, process.stderr) : undefined;
      if (showProgress) process.stderr.write(`Exporting from ${describeAddress(server)}\n`);
      // SIGINT or SIGTERM stops the export where it is; a file export saves where it got to.
      const interrupted = () => {
        if (showProgress) process.stderr.write('\n');
        const how = options.output
          ? `run the same command with --resume to continue ${options.output}`
          : 'standard output cannot be resumed; use --output FILE for that';
        return `export interrupted after ${latest.rows} rows; ${how}`;
      };
      await interruptible(async (signal) => {
        try {
          const done = await runExport(
            new CompplanClient({ baseUrl: server.url, apiKey }),
            request,
            {
              ...(options.output ? { output: options.output } : {}),
              ...(deltaToken ? { deltaToken } : {}),
              resume: options.resume === true,
              force: options.force === true,
              bulk: options.bulk,
              signal,
              onProgress: (progress) => {
                latest = progress;
                draw?.(progress);
              },
            },
          );
          // Only now, with every change written: the next run starts from here.
          if (options.delta !== undefined && done.deltaToken) {
            writeDeltaToken(options.delta, subject, done.deltaToken);
          }
        } catch (error) {
          // The reader of standard output has all it wanted (e.g. `| head`): not a failure.
          if ((error as NodeJS.ErrnoException).code === 'EPIPE' && !signal.aborted) return;
          if (error instanceof ExportError) throw new CliError(error.message);
          const described = describeFailure(error, server);
          if (described) {
            const resumable =
              options.output && latest.pages > 0
                ? `; run the same command with --resume to continue ${options.output}`
                : '';
            throw new CliError(`${described}${resumable}`);
          }
          throw error;
        }
      }, interrupted);
    });
}
