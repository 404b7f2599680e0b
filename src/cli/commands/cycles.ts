// `compplan cycles list --org SLUG`: an organisation's merit cycles and their ids
// (src/modules/merit-cycles/overview.ts), what a CSV import's --cycle needs.
// `compplan cycles remove ID [--yes]`: removes a merit cycle and its employees, in one
// transaction (src/modules/merit-cycles/removal.ts). Asks first on a terminal; elsewhere
// (a script, CI) it removes nothing unless --yes says so.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { configFromEnvironment, printJson, table, withDatabase } from '../context.js';
import { CliError, EXIT_USAGE } from '../errors.js';

async function confirmed(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

export function registerCycles(program: Command): void {
  const cycles = program.command('cycles').description('Merit cycles');

  cycles
    .command('list')
    .description(
      "List an organisation's merit cycles: id, name, status, start date, currency and number of employees",
    )
    .requiredOption('--org <slug>', 'the organisation')
    .option(
      '--json',
      'print a JSON array of {"id","name","status","startDate","currency","employees"}',
    )
    .action(async (options: { org: string; json?: boolean }) => {
      const { findOrganizationBySlug } = await import('../../tenancy/organizations.js');
      const { listOrganizationCycles } = await import('../../modules/merit-cycles/overview.js');
      const list = await withDatabase(configFromEnvironment(), async ({ db }) => {
        const organization = await findOrganizationBySlug(db, options.org);
        if (!organization) throw new CliError(`No organisation with slug "${options.org}"`);
        return listOrganizationCycles(db, organization.id);
      });
      if (options.json) return printJson(list);
      if (list.length === 0) return console.log(`No merit cycles in ${options.org} yet.`);
      console.log(
        table(
          ['ID', 'NAME', 'STATUS', 'START', 'CURRENCY', 'EMPLOYEES'],
          list.map((cycle) => [
            cycle.id,
            cycle.name,
            cycle.status,
            cycle.startDate,
            cycle.currency,
            String(cycle.employees),
          ]),
        ),
      );
    });

  cycles
    .command('remove')
    .description(
      'Remove a merit cycle and all of its employees; delta sync reports the removal. See docs/delta-sync.md',
    )
    .argument('<id>', 'the merit cycle (mc_…)')
    .option('--yes', 'remove without asking')
    .option('--json', 'print what was removed as JSON')
    .action(async (id: string, options: { yes?: boolean; json?: boolean }) => {
      const { describeCycle, NoSuchCycleError, removeMeritCycle } = await import(
        '../../modules/merit-cycles/removal.js'
      );
      const config = configFromEnvironment();
      const removed = await withDatabase(config, async (database) => {
        const cycle = await describeCycle(database, id);
        if (!cycle) throw new CliError(`No merit cycle ${id}`);
        if (!options.yes) {
          if (!process.stdin.isTTY) {
            throw new CliError(
              `cycles remove removes ${cycle.name} (${cycle.id}) of ${cycle.organization} and its ${cycle.employees} employees: pass --yes to do so without a terminal to confirm on`,
              EXIT_USAGE,
            );
          }
          const question = `Remove merit cycle ${cycle.name} (${cycle.id}) of ${cycle.organization} and its ${cycle.employees} employees? [y/N] `;
          if (!(await confirmed(question))) return undefined;
        }
        try {
          return await removeMeritCycle(database, id, {
            changeRetentionDays: config.changeRetentionDays,
          });
        } catch (error) {
          if (error instanceof NoSuchCycleError) throw new CliError(`No merit cycle ${id}`);
          throw error;
        }
      });
      if (!removed) return console.log('Nothing removed.');
      if (options.json) return printJson(removed);
      console.log(
        `Removed merit cycle ${removed.name} (${removed.id}) of ${removed.organization} and its ${removed.employees} employees.`,
      );
    });
}
