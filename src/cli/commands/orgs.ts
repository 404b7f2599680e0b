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
      new Option('--api-keys <state>', 'whether administrators may generate API keys')
        .choices(['enabled', 'disabled'])
        .makeOptionMandatory(),
    )
    .action(async (slug: string, options: { apiKeys: 'enabled' | 'disabled' }) => {
      const { findOrganizationBySlug } = await import('../../tenancy/organizations.js');
      const { changeApiKeysSetting } = await import('../../api-keys/organization-setting.js');
      const { CLI_ACTOR } = await import('../../audit/entry.js');
      await withDatabase(configFromEnvironment(), async ({ db }) => {
        const organization = await findOrganizationBySlug(db, slug);
        if (!organization) throw new CliError(`No organisation with slug "${slug}"`);
        await changeApiKeysSetting(db, organization.id, options.apiKeys === 'enabled', CLI_ACTOR);
      });
      console.log(`API key generation is now ${options.apiKeys} for ${slug}.`);
    });
}
