import { type Command, Option } from 'commander';
import { configFromEnvironment, printJson, table, withDatabase } from '../context.js';
import { CliError } from '../errors.js';

export function registerOrgs(program: Command): void {
  const orgs = program.command('orgs').description('Organisations and their settings');

  orgs
    .command('list')
    .description('List organisations with their settings')
    .option('--json', 'print JSON instead of a table')
    .action(async (options: { json?: boolean }) => {
      const { listOrganizations } = await import('../../tenancy/organizations.js');
      const organizations = await withDatabase(configFromEnvironment(), (database) =>
        listOrganizations(database.db),
      );
      const shown = organizations.map(({ slug, name, apiKeysEnabled, createdAt }) => ({
        slug,
        name,
        apiKeysEnabled,
        createdAt,
      }));
      if (options.json) return printJson(shown);
      if (shown.length === 0)
        return console.log('No organisations yet: load one with compplan import or compplan demo.');
      console.log(
        table(
          ['SLUG', 'NAME', 'API KEYS', 'CREATED'],
          shown.map((o) => [
            o.slug,
            o.name,
            o.apiKeysEnabled ? 'enabled' : 'disabled',
            o.createdAt,
          ]),
        ),
      );
    });

  orgs
    .command('set')
    .description('Change a setting (Settings → Roles & Permissions)')
    .argument('<slug>', 'the organisation')
    .addOption(
      new Option('--api-keys <state>', 'whether administrators may generate API keys').choices([
        'enabled',
        'disabled',
      ]),
    )
    .option(
      '--manager-column <key>',
      "the text column (or composite part, key/part) holding each employee's manager's email, which --reports-to keys follow; none to clear it",
    )
    .action(
      async (
        slug: string,
        options: { apiKeys?: 'enabled' | 'disabled'; managerColumn?: string },
      ) => {
        if (options.apiKeys === undefined && options.managerColumn === undefined) {
          throw new CliError('Give --api-keys enabled|disabled or --manager-column KEY (or both)');
        }
        const { findOrganizationBySlug } = await import('../../tenancy/organizations.js');
        const { changeApiKeysSetting } = await import('../../api-keys/organization-setting.js');
        const { setManagerColumn } = await import('../../row-slices/manager-setting.js');
        const { CLI_ACTOR } = await import('../../audit/entry.js');
        const config = configFromEnvironment();
        await withDatabase(config, async (database) => {
          const organization = await findOrganizationBySlug(database.db, slug);
          if (!organization) throw new CliError(`No organisation with slug "${slug}"`);
          if (options.managerColumn !== undefined) {
            const column = options.managerColumn === 'none' ? null : options.managerColumn;
            const { reportingLoops } = await setManagerColumn(database, slug, column, {
              changeRetentionDays: config.changeRetentionDays,
            });
            console.log(
              column === null
                ? `${slug} has no manager column now.`
                : `${slug}'s manager column is now ${column}: keys made with --reports-to follow it.`,
            );
            for (const line of reportingLoopLines(reportingLoops)) console.log(line);
          }
          if (options.apiKeys !== undefined) {
            await changeApiKeysSetting(
              database.db,
              organization.id,
              options.apiKeys === 'enabled',
              CLI_ACTOR,
            );
            console.log(`API key generation is now ${options.apiKeys} for ${slug}.`);
          }
        });
      },
    );
}

/** Reporting loops, as the import's summary and `orgs set --manager-column` say them. */
export function reportingLoopLines(
  found: readonly { meritCycleId: string; loops: string[][] }[],
): string[] {
  return found.flatMap(({ meritCycleId, loops }) =>
    loops.map(
      (loop) =>
        `Reporting loop in ${meritCycleId}: ${[...loop, loop[0]].join(' → ')} (each reports to the next). Slices that follow reporting lines read it without looping; fix the managers in your data.`,
    ),
  );
}
