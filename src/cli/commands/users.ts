import { type Command, Option } from 'commander';
import { ROLES, type Role } from '../../users/repository.js';
import { createUser, listOrganizationUsers, removeUser } from '../../users/service.js';
import { configFromEnvironment, printJson, table, withDatabase } from '../context.js';
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

  users
    .command('list')
    .description("List an organisation's users: role and last sign-in")
    .requiredOption('--org <slug>', 'the organisation')
    .option(
      '--json',
      'print [{"id","email","role","lastSignedInAt","mustChangePassword","createdAt"}]',
    )
    .action(async (options: { org: string; json?: boolean }) => {
      const list = await withDatabase(configFromEnvironment(), ({ db }) =>
        listOrganizationUsers(db, options.org),
      );
      if (options.json) {
        return printJson(
          list.map(({ id, email, role, lastSignedInAt, mustChangePassword, createdAt }) => ({
            id,
            email,
            role,
            lastSignedInAt,
            mustChangePassword,
            createdAt,
          })),
        );
      }
      if (list.length === 0) return console.log(`No users for ${options.org} yet.`);
      console.log(
        table(
          ['ID', 'EMAIL', 'ROLE', 'LAST SIGN-IN', 'CREATED'],
          list.map((user) => [
            user.id,
            user.email,
            user.role,
            user.lastSignedInAt ??
              (user.mustChangePassword ? 'never (one-time password)' : 'never'),
            user.createdAt,
          ]),
        ),
      );
    });

  users
    .command('remove')
    .description('Remove a user: their sessions end at once; the last owner cannot be removed')
    .requiredOption('--org <slug>', 'the organisation')
    .requiredOption('--email <address>', 'the email the user signs in with')
    .action(async (options: { org: string; email: string }) => {
      const removed = await withDatabase(configFromEnvironment(), ({ db }) =>
        removeUser(db, options.org, { email: options.email }),
      );
      console.log(
        `Removed ${removed.email} (${removed.id}) of ${options.org}; their sessions have ended.`,
      );
    });
}
