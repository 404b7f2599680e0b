import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import type { ImportSummary } from '../../import/load.js';
import { CliError, configFromEnvironment, EXIT_USAGE, withDatabase } from '../context.js';

async function readSource(file: string): Promise<string> {
  if (file === '-') return text(process.stdin);
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : (error as Error).message;
    throw new CliError(`Cannot read ${file}: ${reason}`);
  }
}

export function describeSummary(summary: ImportSummary): string {
  const { meritCycles: c, employees: e } = summary;
  const org = `${summary.organization.slug}${summary.organization.created ? ' (new organisation)' : ''}`;
  return [
    `Imported ${org}:`,
    `  merit cycles: ${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`,
    `  employees:    ${e.created} created, ${e.updated} updated, ${e.unchanged} unchanged, ${e.removed} removed`,
  ].join('\n');
}

export function registerImport(program: Command): void {
  program
    .command('import')
    .description(
      "Load a data set (JSON or NDJSON), or a merit cycle's employees (CSV, with --org and --cycle); all or nothing. See docs/import-format.md",
    )
    .argument('<file>', 'the data set file, or - for standard input')
    .option('--org <slug>', 'CSV: the organisation of the merit cycle')
    .option('--cycle <id>', 'CSV: the merit cycle whose employees the file lists')
    .option(
      '--prune',
      'also remove the employees of an imported cycle that the file no longer lists',
    )
    .action(async (file: string, options: { prune?: boolean; org?: string; cycle?: string }) => {
      const config = configFromEnvironment();
      if (
        options.org !== undefined ||
        options.cycle !== undefined ||
        file.toLowerCase().endsWith('.csv')
      ) {
        const { org, cycle } = options;
        if (!org || !cycle) {
          throw new CliError('a CSV import needs --org SLUG and --cycle ID', EXIT_USAGE);
        }
        const text = await readSource(file);
        const { importEmployeesCsv } = await import('./import-csv.js');
        const summary = await withDatabase(
          config,
          (database) =>
            importEmployeesCsv(database, text, { org, cycle, prune: options.prune === true }),
          { undoCreation: true },
        );
        console.log(describeSummary(summary));
        return;
      }
      // Streamed: records are read, validated and staged as the file is read, inside the
      // import's one transaction (src/import/load.ts), so memory does not grow with it.
      const { importRecords } = await import('../../import/load.js');
      const { DataSetSyntaxError } = await import('../../import/errors.js');
      const { openSource, recordsOfStream, SourceError } = await import('../../import/source.js');
      let stream: AsyncIterable<string>;
      try {
        stream = await openSource(file);
      } catch (error) {
        if (error instanceof SourceError)
          throw new CliError(`Cannot read ${file}: ${error.message}`);
        throw error;
      }
      let summary: ImportSummary;
      try {
        // NDJSON by its extension, or by its first line (standard input, other names).
        const records = await recordsOfStream(file, stream);
        summary = await withDatabase(
          config,
          (database) => importRecords(database, records, { prune: options.prune === true }),
          { undoCreation: true },
        );
      } catch (error) {
        if (!(error instanceof DataSetSyntaxError)) throw error;
        const name = file === '-' ? 'standard input' : file;
        throw new CliError(`Cannot import ${name}, nothing changed: ${error.message}`);
      }
      console.log(describeSummary(summary));
    });
}
