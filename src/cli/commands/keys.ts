import type { Command } from 'commander';
import type { ApiKey } from '../../api-keys/repository.js';
import { DEFAULT_GRACE, EXPIRING_SOON_MS, parseList } from '../../api-keys/restrictions.js';
import { COLUMN_TYPES } from '../../columns/types.js';
import { configFromEnvironment, printJson, table, withDatabase } from '../context.js';
import { baseUrlHelp, serverAddress } from '../server-address.js';

const service = () => import('../../api-keys/service.js');

interface CreateOptions {
  org: string;
  name?: string;
  cycles?: string;
  hideColumns?: string;
  hideColumnTypes?: string;
  allowUnknownColumns?: boolean;
  expiresIn?: string;
  expiresAt?: string;
  allowIps?: string;
  rows?: string;
  reportsTo?: string;
  baseUrl?: string;
  json?: boolean;
}

/** A key as `keys list` shows it: everything but the secret, and where it stands now. */
function listed(key: ApiKey, now: number) {
  const expiresAt = key.expiresAt === null ? null : Date.parse(key.expiresAt);
  const expired = expiresAt !== null && expiresAt <= now;
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    lastUsedAddress: key.lastUsedAddress,
    revoked: key.revokedAt !== null,
    revokedAt: key.revokedAt,
    cycles: key.cycles,
    hiddenColumns: key.hiddenColumns,
    hiddenColumnTypes: key.hiddenColumnTypes,
    allowedAddresses: key.allowedAddresses,
    rowSlice: key.rowSlice,
    expiresAt: key.expiresAt,
    expired,
    expiringSoon:
      key.revokedAt === null &&
      !expired &&
      expiresAt !== null &&
      expiresAt - now <= EXPIRING_SOON_MS,
    previousSecretExpiresAt:
      key.previousSecretExpiresAt !== null && Date.parse(key.previousSecretExpiresAt) > now
        ? key.previousSecretExpiresAt
        : null,
  };
}

/** What a new key's slice reads today; a slice that reads nobody yet is allowed, and said. */
function sliceSentence(slice: { description: string; employees: number }): string {
  const count =
    slice.employees === 0
      ? 'no employee today: check the values and the letter case, as the data writes them'
      : `${slice.employees.toLocaleString('en')} employee${slice.employees === 1 ? '' : 's'} today`;
  return `It reads only the employees where ${slice.description}: ${count}.`;
}

function statusOf(key: ReturnType<typeof listed>): string {
  if (key.revokedAt) return `revoked ${key.revokedAt}`;
  if (key.expired) return 'expired';
  const notes = [
    ...(key.expiringSoon ? ['EXPIRES WITHIN 7 DAYS'] : []),
    ...(key.previousSecretExpiresAt ? [`old secret until ${key.previousSecretExpiresAt}`] : []),
  ];
  return notes.length === 0 ? 'active' : `active (${notes.join('; ')})`;
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('API keys (Settings → Connections)');

  keys
    .command('create')
    .description('Generate an API key; its secret is printed once and can never be shown again')
    .requiredOption('--org <slug>', 'the organisation the key reads')
    .option('--name <text>', 'what the key is for, e.g. "Looker export"')
    .option('--cycles <ids>', 'read only these merit cycles (mc_…,mc_…); default: every cycle')
    .option(
      '--hide-columns <keys>',
      "column keys absent from every employee read, e.g. basePay,annualBonusCash; each must be a column of the organisation's data",
    )
    .option(
      '--allow-unknown-columns',
      '--hide-columns may name columns no data has yet (meant for data still to come)',
    )
    .option(
      '--hide-column-types <types>',
      `every column of these types absent, also those imported later, composite parts included: ${COLUMN_TYPES.join(', ')}`,
    )
    .option('--expires-in <duration>', 'expire after this long, e.g. 90d, 12h')
    .option('--expires-at <date>', 'expire at this date (YYYY-MM-DD, UTC) or ISO 8601 time')
    .option(
      '--allow-ips <cidrs>',
      'usable only from these IPv4/IPv6 addresses or CIDR ranges, e.g. 203.0.113.0/24,2001:db8::/32; default: any',
    )
    .option(
      '--rows <conditions>',
      'read only the employees these text column conditions hold for, e.g. "department in (Engineering, Sales) and country = DE" (docs/api-keys.md, "Slices")',
    )
    .option(
      '--reports-to <email>',
      "read only the employees whose reporting line reaches this manager, at any depth (needs the organisation's manager column: compplan orgs set SLUG --manager-column KEY)",
    )
    .option('--base-url <url>', baseUrlHelp('the server of the curl line printed'))
    .option(
      '--json',
      'print {"id","key","org","name","createdAt","cycles","hiddenColumns","hiddenColumnTypes","expiresAt","allowedAddresses","rowSlice"} (docs/api-keys.md)',
    )
    .action(async (options: CreateOptions) => {
      // Checked before the key is made: a bad address is a usage error.
      const server = serverAddress(options.baseUrl, process.env);
      const { createApiKey } = await service();
      const created = await withDatabase(configFromEnvironment(), (database) =>
        createApiKey(database, {
          org: options.org,
          name: options.name,
          cycles: options.cycles === undefined ? undefined : parseList(options.cycles, '--cycles'),
          hiddenColumns:
            options.hideColumns === undefined
              ? undefined
              : parseList(options.hideColumns, '--hide-columns'),
          allowUnknownColumns: options.allowUnknownColumns,
          hiddenColumnTypes:
            options.hideColumnTypes === undefined
              ? undefined
              : parseList(options.hideColumnTypes, '--hide-column-types'),
          expiresIn: options.expiresIn,
          expiresAt: options.expiresAt,
          allowedAddresses:
            options.allowIps === undefined ? undefined : parseList(options.allowIps, '--allow-ips'),
          rows: options.rows,
          reportsTo: options.reportsTo,
        }),
      );
      const { id, key, org, name } = created;
      if (options.json) return printJson(created);
      const restrictions = [
        ...(created.cycles ? [`It reads only the merit cycles ${created.cycles.join(', ')}.`] : []),
        ...(created.hiddenColumns.length > 0
          ? [`Employees it reads have no ${created.hiddenColumns.join(', ')} columns.`]
          : []),
        ...(created.hiddenColumnTypes.length > 0
          ? [
              `Employees it reads have no ${created.hiddenColumnTypes.join(' or ')} columns or parts, also in later imports.`,
            ]
          : []),
        ...(created.expiresAt ? [`It expires at ${created.expiresAt}.`] : []),
        ...(created.allowedAddresses
          ? [`It may be used only from ${created.allowedAddresses.join(', ')}.`]
          : []),
        ...(created.rowSlice ? [sliceSentence(created.rowSlice)] : []),
      ];
      console.log(
        [
          `Created API key ${id} ("${name}") for ${org}.`,
          ...restrictions,
          '',
          `  ${key}`,
          '',
          'Copy it now: it is shown only this once and cannot be displayed again.',
          `Try it: curl -H "x-api-key: ${key}" ${server.url}/ping`,
          `(the address comes from ${server.source}; for another server, pass --base-url or set COMPPLAN_BASE_URL)`,
        ].join('\n'),
      );
    });

  keys
    .command('roll')
    .description(
      'Give a key a new secret (printed once) with the same name and scope; the old secret keeps working for the grace period',
    )
    .argument('<id>', 'the key id (key_…), as keys list shows it')
    .option(
      '--grace <duration>',
      'how long the old secret keeps working, at most 30d',
      DEFAULT_GRACE,
    )
    .option(
      '--json',
      'print {"id","key","org","name","cycles","hiddenColumns","hiddenColumnTypes","expiresAt","allowedAddresses","rowSlice","previousSecretExpiresAt"} (docs/api-keys.md)',
    )
    .action(async (id: string, options: { grace: string; json?: boolean }) => {
      const { rollApiKeyById } = await service();
      const rolled = await withDatabase(configFromEnvironment(), ({ db }) =>
        rollApiKeyById(db, id, options.grace),
      );
      if (options.json) return printJson(rolled);
      console.log(
        [
          `Rolled API key ${rolled.id} ("${rolled.name}") of ${rolled.org}: same name and scope, new secret.`,
          '',
          `  ${rolled.key}`,
          '',
          'Copy it now: it is shown only this once and cannot be displayed again.',
          `The old secret keeps working until ${rolled.previousSecretExpiresAt}, then gets 401.`,
        ].join('\n'),
      );
    });

  keys
    .command('list')
    .description(
      "List an organisation's keys with what each may read, expiry and last use (never their secrets)",
    )
    .requiredOption('--org <slug>', 'the organisation')
    .option('--json', 'print JSON instead of a table')
    .action(async (options: { org: string; json?: boolean }) => {
      const { listOrganizationApiKeys } = await service();
      const list = await withDatabase(configFromEnvironment(), ({ db }) =>
        listOrganizationApiKeys(db, options.org),
      );
      const now = Date.now();
      const shown = list.map((key) => listed(key, now));
      if (options.json) return printJson(shown);
      if (shown.length === 0) return console.log(`No API keys for ${options.org} yet.`);
      console.log(
        table(
          [
            'ID',
            'NAME',
            'PREFIX',
            'CYCLES',
            'HIDDEN COLUMNS',
            'HIDDEN TYPES',
            'ALLOWED IPS',
            'ROWS',
            'EXPIRES',
            'CREATED',
            'LAST USED',
            'STATUS',
          ],
          shown.map((k) => [
            k.id,
            k.name,
            `${k.prefix}…`,
            k.cycles?.join(',') ?? 'all',
            k.hiddenColumns.length > 0 ? k.hiddenColumns.join(',') : 'none',
            k.hiddenColumnTypes.length > 0 ? k.hiddenColumnTypes.join(',') : 'none',
            k.allowedAddresses?.join(',') ?? 'any',
            k.rowSlice?.description ?? 'all',
            k.expiresAt ?? 'never',
            k.createdAt,
            k.lastUsedAt ? `${k.lastUsedAt} from ${k.lastUsedAddress ?? 'unknown'}` : 'never',
            statusOf(k),
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
      const key = await withDatabase(configFromEnvironment(), ({ db }) => revokeApiKeyById(db, id));
      console.log(
        `Revoked ${key.id} ("${key.name}") at ${key.revokedAt}. Requests with it get 401 within 5 seconds.`,
      );
    });
}
