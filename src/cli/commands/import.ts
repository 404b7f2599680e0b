import { writeFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import type { ImportSummary } from '../../import/load.js';
import {
  AMOUNT_WRITINGS,
  type AmountWriting,
  DATE_WRITINGS,
  type DateWriting,
  ENCODINGS,
  type Encoding,
} from '../../import/sheet-reading.js';
import type { Source } from '../../import/source.js';
import { configFromEnvironment, withDatabase } from '../context.js';
import { CliError, EXIT_USAGE } from '../errors.js';
import { interruptible, unlessAborted } from '../interruption.js';
import { reportingLoopLines } from './orgs.js';

/**
 * A CSV file (or standard input) whole: it lists one cycle, so it is small (4 MiB at most);
 * an Excel workbook is read where it is (src/import/xlsx.ts).
 */
async function readSource(file: string, sheet: string | undefined) {
  const { readSheetSource, SourceError } = await import('../../import/source.js');
  try {
    return await readSheetSource(file, sheet);
  } catch (error) {
    if (error instanceof SourceError) throw new CliError(`Cannot read ${file}: ${error.message}`);
    throw error;
  }
}

export function describeSummary(summary: ImportSummary): string {
  const { organization, meritCycles: c, employees: e } = summary;
  const org = `${organization.slug}${organization.created ? ' (new organisation)' : ''}`;
  return [
    `Imported ${org}:`,
    // Only when a stored organisation changed: its name, or whether it may have API keys.
    ...(organization.changed.length > 0
      ? [`  organisation: ${organization.changed.join(' and ')} updated`]
      : []),
    `  merit cycles: ${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`,
    `  employees:    ${e.created} created, ${e.updated} updated, ${e.unchanged} unchanged, ${e.removed} removed`,
    ...reportingLoopLines(summary.reportingLoops ?? []).map((line) => `  ${line}`),
  ].join('\n');
}

export function registerImport(program: Command): void {
  program
    .command('import')
    .description(
      "Load a data set (JSON or NDJSON), or a merit cycle's employees (CSV or an Excel workbook, with --org and --cycle); all or nothing. See docs/import-format.md",
    )
    .argument('<file>', 'the data set file, or - for standard input')
    .option('--org <slug>', 'CSV: the organisation of the merit cycle')
    .option('--cycle <id>', 'CSV: the merit cycle whose employees the file lists')
    .option(
      '--prune',
      'also remove the employees of an imported cycle that the file no longer lists',
    )
    .addOption(
      new Option('--dates <writing>', 'CSV: how the file writes dates')
        .choices(DATE_WRITINGS)
        .default('YYYY-MM-DD'),
    )
    .addOption(
      new Option('--amounts <writing>', 'CSV: how the file writes amounts and numbers')
        .choices(AMOUNT_WRITINGS)
        .default('1234.56'),
    )
    .addOption(
      new Option('--encoding <encoding>', "CSV: the file's encoding")
        .choices(ENCODINGS)
        .default('utf-8'),
    )
    .option(
      '--sheet <name>',
      'Excel workbook (.xlsx): the sheet to read (default: the first visible sheet)',
    )
    .option('--ignore-unknown-columns', 'CSV: leave out columns the format does not know')
    .option('--problems <file.csv>', "CSV: write the file's problems, every one, to this CSV file")
    .action((file: string, options: ImportOptions) =>
      // SIGINT or SIGTERM rolls the import back and removes a database it created.
      interruptible(
        (signal) => runImport(file, options, signal),
        () => 'interrupted; nothing changed.',
      ),
    );
}

interface ImportOptions {
  prune?: boolean;
  org?: string;
  cycle?: string;
  dates: DateWriting;
  amounts: AmountWriting;
  encoding: Encoding;
  ignoreUnknownColumns?: boolean;
  problems?: string;
  sheet?: string;
}

async function runImport(file: string, options: ImportOptions, signal: AbortSignal): Promise<void> {
  const config = configFromEnvironment();
  // Fails at once, before the input is read, for a database that cannot be written or is
  // locked by another writer; and never commits once interrupted.
  const databaseOptions = { undoCreation: true, checkWritable: true, signal };
  if (options.org !== undefined || options.cycle !== undefined || /\.(csv|xlsx)$/i.test(file)) {
    const { org, cycle } = options;
    // A data set names its organisation and cycles itself: flags beside one are a mistake,
    // which reading the file as CSV would only report as a confusing CSV problem.
    if (/\.(json|ndjson|jsonl)$/i.test(file)) {
      throw new CliError(
        `--org and --cycle are for a CSV file of one cycle's employees; ${file} is a data set, which names its organisation and cycles itself`,
        EXIT_USAGE,
      );
    }
    if (!org || !cycle) {
      throw new CliError('a CSV import needs --org SLUG and --cycle ID', EXIT_USAGE);
    }
    const bytes = await unlessAborted(readSource(file, options.sheet), signal);
    if (options.sheet !== undefined && bytes instanceof Uint8Array) {
      throw new CliError(
        `--sheet is for an Excel workbook (.xlsx); ${file} is read as CSV`,
        EXIT_USAGE,
      );
    }
    const { importEmployeesCsv } = await import('../../import/cycle-csv.js');
    const { SheetProblemsError } = await import('../../import/sheet-problems.js');
    let summary: ImportSummary;
    try {
      summary = await withDatabase(
        config,
        (database) =>
          importEmployeesCsv(database, bytes, {
            org,
            cycle,
            prune: options.prune === true,
            changeRetentionDays: config.changeRetentionDays,
            reading: {
              dates: options.dates,
              amounts: options.amounts,
              encoding: options.encoding,
              ignoreUnknownColumns: options.ignoreUnknownColumns === true,
            },
          }),
        databaseOptions,
      );
    } catch (error) {
      // The whole list, to fix in a spreadsheet, where it was asked for.
      if (error instanceof SheetProblemsError && options.problems !== undefined) {
        await writeFile(options.problems, error.csv());
      }
      throw error;
    }
    console.log(describeSummary(summary));
    return;
  }
  // Records are validated and staged as they are taken, inside the import's one
  // transaction (src/import/load.ts); NDJSON line by line, in memory that does not grow
  // with it; the reading and validating in a worker thread, beside the writing.
  const { importFile } = await import('../../import/load.js');
  const { IntakeWorker } = await import('../../import/intake-worker.js');
  const { openSource, SourceError } = await import('../../import/source.js');
  let source: Source;
  try {
    source = await openSource(file);
  } catch (error) {
    if (error instanceof SourceError) throw new CliError(`Cannot read ${file}: ${error.message}`);
    throw error;
  }
  // Started now, so that it starts while the database is opened; it reads nothing yet.
  // NDJSON by the file's extension, or by its first line (standard input, other names).
  const worker = new IntakeWorker(file, config.database.dialect);
  let summary: ImportSummary;
  try {
    summary = await withDatabase(
      config,
      (database) =>
        importFile(database, worker, source, {
          prune: options.prune === true,
          changeRetentionDays: config.changeRetentionDays,
          signal,
        }),
      databaseOptions,
    );
  } finally {
    worker.stop();
  }
  console.log(describeSummary(summary));
}
