import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import { type ImportSummary, importDataSet } from '../../import/load.js';
import { parseDataSetText } from '../../import/parse.js';
import { CliError, configFromEnvironment, withDatabase } from '../context.js';

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
    .description('Load a data set (JSON, see docs/import-format.md); all or nothing')
    .argument('<file>', 'the data set file, or - for standard input')
    .option(
      '--prune',
      'also remove the employees of an imported cycle that the file no longer lists',
    )
    .action(async (file: string, options: { prune?: boolean }) => {
      const config = configFromEnvironment();
      const dataSet = parseDataSetText(await readSource(file));
      const summary = await withDatabase(config, (database) =>
        importDataSet(database, dataSet, { prune: options.prune === true }),
      );
      console.log(describeSummary(summary));
    });
}
