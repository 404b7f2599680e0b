import type { Command } from 'commander';
import { configFromEnvironment, printJson, table, withDatabase } from '../context.js';
import { CliError } from '../errors.js';
import { baseUrlHelp, serverAddress } from '../server-address.js';

const service = () => import('../../modules/api-keys/service.js');

/** Key management failures (unknown organisation, keys disabled, …) as CLI failures. */
async function managing<T>(work: () => Promise<T>): Promise<T> {
  const { KeyManagementError } = await service();
  try {
    return await work();
  } catch (error) {
    if (error instanceof KeyManagementError) throw new CliError(error.message);
    throw error;
  }
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('API keys (Settings → Connections)');

  keys
    .command('create')
    .description('Generate an API key; its secret is printed once and can never be shown again')
    .requiredOption('--org <slug>', 'the organisation the key reads')
    .option('--name <text>', 'what the key is for, e.g. "Looker export"')
    .option('--base-url <url>', baseUrlHelp('the server of the curl line printed'))
    .option('--json', 'print {"id","key","org","name","createdAt"}')
    .action(async (options: { org: string; name?: string; baseUrl?: string; json?: boolean }) => {
      // Checked before the key is made: a bad address is a usage error.
      const server = serverAddress(options.baseUrl, process.env);
      const { createApiKey } = await service();
      const created = await withDatabase(configFromEnvironment(), ({ db }) =>
        managing(() => createApiKey(db, { org: options.org, name: options.name })),
      );
      if (options.json) return printJson(created);
      console.log(
        [
          `Created API key ${created.id} ("${created.name}") for ${created.org}.`,
          '',
          `  ${created.key}`,
          '',
          'Copy it now: it is shown only this once and cannot be displayed again.',
          `Try it: curl -H "x-api-key: ${created.key}" ${server.url}/ping`,
          `(the address comes from ${server.source}; for another server, pass --base-url or set COMPPLAN_BASE_URL)`,
        ].join('\n'),
      );
    });

  keys
    .command('list')
    .description("List an organisation's keys (never their secrets)")
    .requiredOption('--org <slug>', 'the organisation')
    .option('--json', 'print JSON instead of a table')
    .action(async (options: { org: string; json?: boolean }) => {
      const { listOrganizationApiKeys } = await service();
      const list = await withDatabase(configFromEnvironment(), ({ db }) =>
        managing(() => listOrganizationApiKeys(db, options.org)),
      );
      const shown = list.map(({ id, name, prefix, createdAt, lastUsedAt, revokedAt }) => ({
        id,
        name,
        prefix,
        createdAt,
        lastUsedAt,
        revoked: revokedAt !== null,
        revokedAt,
      }));
      if (options.json) return printJson(shown);
      if (shown.length === 0) return console.log(`No API keys for ${options.org} yet.`);
      console.log(
        table(
          ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'STATUS'],
          shown.map((k) => [
            k.id,
            k.name,
            `${k.prefix}…`,
            k.createdAt,
            k.lastUsedAt ?? 'never',
            k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
          ]),
        ),
      );
    });

  keys
    .command('revoke')
    .description('Revoke a key: requests with it get 401 within 5 seconds')
    .argument('<id>', 'the key id (key_…), as keys list shows it')
    .action(async (id: string) => {
      const { revokeApiKeyById } = await service();
      const key = await withDatabase(configFromEnvironment(), ({ db }) =>
        managing(() => revokeApiKeyById(db, id)),
      );
      console.log(
        `Revoked ${key.id} ("${key.name}") at ${key.revokedAt}. Requests with it get 401 within 5 seconds.`,
      );
    });
}
