// `compplan audit list|export`: an organisation's audit log (docs/security.md, "Audit
// log"), newest first, from the database the server writes it to.
import type { Command } from 'commander';
import type { AuditEntry } from '../../audit/entry.js';
import { configFromEnvironment, printJson, table, withDatabase } from '../context.js';

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 10_000;
const COLUMN_HELP =
  'only the requests whose answer carried this column key (case-sensitive), after the key\'s hidden columns and $select: "which keys read basePay"';

/** What an entry was, in a few words: the request, or the action's target and details. */
function described(entry: AuditEntry): string {
  if (entry.action === 'api.request') {
    const columns = entry.columnsServed === null ? '' : ` (${entry.columnsServed.join(', ')})`;
    return `${entry.method} ${entry.path} → ${entry.status}, ${entry.employees} employees${columns}`;
  }
  const details = entry.details === null ? '' : ` ${JSON.stringify(entry.details)}`;
  return `${entry.target ?? ''}${details}`.trim();
}

export function registerAudit(program: Command): void {
  const audit = program
    .command('audit')
    .description('The audit log: every request with a valid key, every management action');

  audit
    .command('list')
    .description("List an organisation's audit log entries, newest first")
    .requiredOption('--org <slug>', 'the organisation')
    .option('--key <id>', 'only the requests of this key (key_…)')
    .option('--since <date>', 'only entries at or after this date (YYYY-MM-DD, UTC) or time')
    .option('--column <key>', COLUMN_HELP)
    .option(
      '--limit <n>',
      `at most this many entries (1–${MAX_LIST_LIMIT})`,
      String(DEFAULT_LIST_LIMIT),
    )
    .option('--json', 'print JSON instead of a table')
    .action(
      async (options: {
        org: string;
        key?: string;
        since?: string;
        column?: string;
        limit: string;
        json?: boolean;
      }) => {
        const { AuditError, columnOf, organizationOrFail, timeOf } = await import(
          '../../audit/service.js'
        );
        const { listAuditEntries } = await import('../../audit/repository.js');
        const limit = Number(options.limit);
        if (!/^\d+$/.test(options.limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
          throw new AuditError(`--limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
        }
        const since = options.since === undefined ? undefined : timeOf(options.since, '--since');
        const { slicesById } = await import('../../row-slices/repository.js');
        const { entries, slices } = await withDatabase(configFromEnvironment(), async ({ db }) => {
          const organization = await organizationOrFail(db, options.org);
          const column = options.column === undefined ? undefined : columnOf(options.column);
          const filter = { keyId: options.key, since, column };
          const found = await listAuditEntries(db, organization.id, filter, { limit });
          const ids = found.flatMap((entry) =>
            entry.rowSliceId === null ? [] : [entry.rowSliceId],
          );
          return { entries: found, slices: await slicesById(db, [...new Set(ids)]) };
        });
        if (options.json) return printJson(entries);
        if (entries.length === 0) return console.log(`No audit log entries for ${options.org}.`);
        console.log(
          table(
            ['TIME', 'ACTION', 'KEY OR ACTOR', 'WHAT', 'ROWS', 'FROM'],
            entries.map((entry) => [
              entry.at,
              entry.action,
              (entry.action === 'api.request' ? entry.keyId : entry.actor) ?? '',
              described(entry),
              // The slice a request was read through; "all" for a key of every employee.
              entry.action !== 'api.request'
                ? ''
                : entry.rowSliceId === null
                  ? 'all'
                  : (slices.get(entry.rowSliceId)?.description ?? entry.rowSliceId),
              entry.clientAddress ?? '',
            ]),
          ),
        );
      },
    );

  audit
    .command('export')
    .description(
      "Write an organisation's audit log to a CSV file, newest first (cells a spreadsheet would run as formulas are written as text)",
    )
    .requiredOption('--org <slug>', 'the organisation')
    .option('--since <date>', 'only entries at or after this date (YYYY-MM-DD, UTC) or time')
    .option('--column <key>', COLUMN_HELP)
    .requiredOption('-o, --output <file>', 'the CSV file to write')
    .action(async (options: { org: string; since?: string; column?: string; output: string }) => {
      const { columnOf, organizationOrFail, timeOf } = await import('../../audit/service.js');
      const { exportAuditCsv } = await import('../../audit/csv.js');
      const since = options.since === undefined ? undefined : timeOf(options.since, '--since');
      const count = await withDatabase(configFromEnvironment(), async ({ db }) => {
        const organization = await organizationOrFail(db, options.org);
        const column = options.column === undefined ? undefined : columnOf(options.column);
        const filter = { since, column };
        return exportAuditCsv(db, organization.id, filter, options.output);
      });
      process.stderr.write(
        `Wrote ${count} audit log entries of ${options.org} to ${options.output}.\n`,
      );
    });
}
