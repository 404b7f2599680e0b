import { type Command, Option } from 'commander';
import { ROLES, type Role } from '../../modules/users/repository.js';
import { createUser } from '../../modules/users/service.js';
import { configFromEnvironment, printJson, withDatabase } from '../context.js';
import { baseUrlHelp, serverAddress } from '../server-address.js';

interface UsersCreateOptions {
  org: string;
  email: string;
  role: Role;
  baseUrl?: string;
  json?: boolean;
}

export function registerUsers(program: Command): void {
  const users = program
    .command('users')
    .description('Users of the web application (sign-in, Settings → Connections)');

  users
    .command('create')
    .description(
      'Create a user with a one-time password, printed once; the user chooses their own at first sign-in',
    )
    .requiredOption('--org <slug>', 'the organisation the user belongs to')
    .requiredOption('--email <address>', 'the email the user signs in with')
    .addOption(
      new Option('--role <role>', 'owner: also changes Roles & Permissions; admin: Connections')
        .choices(ROLES)
        .makeOptionMandatory(),
    )
    .option(
      '--base-url <url>',
      baseUrlHelp('the server the user signs in at, for the address printed'),
    )
    .option('--json', 'print {"id","org","email","role","oneTimePassword","createdAt"}')
    .action(async (options: UsersCreateOptions) => {
      // Checked before anything is created: a bad address is a usage error.
      const server = serverAddress(options.baseUrl, process.env);
      const created = await withDatabase(configFromEnvironment(), async ({ db }) => {
        return createUser(db, { org: options.org, email: options.email, role: options.role });
      });
      if (options.json) return printJson(created);
      const role = created.role === 'owner' ? 'owner' : 'administrator';
      console.log(
        [
          `Created ${role} ${created.email} (${created.id}) for ${created.org}.`,
          '',
          'One-time password:',
          '',
          `  ${created.oneTimePassword}`,
          '',
          'It is shown only this once. Give it to the user: they sign in at',
          '',
          `  ${server.url}/app/sign-in`,
          '',
          'and then choose their own password.',
          `The address comes from ${server.source}; for another server, pass --base-url or set COMPPLAN_BASE_URL.`,
        ].join('\n'),
      );
    });
}
