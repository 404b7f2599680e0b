import type { Command } from 'commander';
import { parseList } from '../../api-keys/restrictions.js';
import { configFromEnvironment, printJson, table, withDatabase } from '../context.js';

const service = () => import('../../webhooks/service.js');

export function registerWebhooks(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description('Webhook endpoints (Settings → Connections → Webhooks)');

  webhooks
    .command('add')
    .description(
      'Add an endpoint the organisation’s events are sent to; its signing secret is printed once',
    )
    .requiredOption('--org <slug>', 'the organisation whose events it receives')
    .requiredOption('--url <url>', 'where events are POSTed: https:// and a public address')
    .option(
      '--events <types>',
      'only these event types, e.g. meritCycle.employees.changed,meritCycle.removed (default: all)',
    )
    .option('--json', 'print {"id","org","url","events","secret","createdAt"}')
    .action(async (options: { org: string; url: string; events?: string; json?: boolean }) => {
      const config = configFromEnvironment();
      const { addWebhookEndpoint } = await service();
      const added = await withDatabase(config, ({ db }) =>
        addWebhookEndpoint(db, {
          org: options.org,
          url: options.url,
          events: options.events === undefined ? undefined : parseList(options.events, '--events'),
          allowPrivateNetworks: config.webhooks?.allowPrivateNetworks ?? [],
        }),
      );
      if (options.json) return printJson(added);
      console.log(
        [
          `Added webhook endpoint ${added.id} for ${added.org}: ${added.url}`,
          `Events: ${added.events.join(', ')} (and ping, sent by compplan webhooks test ${added.id}).`,
          '',
          `  ${added.secret}`,
          '',
          'This is the signing secret: copy it now, it is shown only this once.',
          'Verify each request with a Standard Webhooks library (docs/webhooks.md).',
        ].join('\n'),
      );
    });

  webhooks
    .command('list')
    .description('List an organisation’s endpoints, their status and last deliveries')
    .requiredOption('--org <slug>', 'the organisation')
    .option('--json', 'print JSON instead of a table')
    .action(async (options: { org: string; json?: boolean }) => {
      const { listOrganizationWebhooks } = await service();
      const list = await withDatabase(configFromEnvironment(), ({ db }) =>
        listOrganizationWebhooks(db, options.org),
      );
      if (options.json) return printJson(list);
      if (list.length === 0) return console.log(`No webhook endpoints for ${options.org} yet.`);
      console.log(
        table(
          ['ID', 'URL', 'EVENTS', 'STATUS', 'CREATED', 'LAST DELIVERY'],
          list.map((endpoint) => {
            const last = endpoint.deliveries[0];
            return [
              endpoint.id,
              endpoint.url,
              endpoint.events.join(','),
              endpoint.status === 'failing' ? 'FAILING' : endpoint.status,
              endpoint.createdAt,
              last
                ? `${last.eventType} ${last.state}${last.lastStatus === null ? '' : ` (${last.lastStatus})`}, ${last.attempts} attempt${last.attempts === 1 ? '' : 's'}${last.nextAttemptAt ? `, next ${last.nextAttemptAt}` : ''}`
                : 'none',
            ];
          }),
        ),
      );
    });

  webhooks
    .command('remove')
    .description('Remove an endpoint: nothing more is sent to it')
    .argument('<id>', 'the endpoint id (wh_…), as webhooks list shows it')
    .action(async (id: string) => {
      const { removeWebhookEndpointById } = await service();
      const endpoint = await withDatabase(configFromEnvironment(), ({ db }) =>
        removeWebhookEndpointById(db, id),
      );
      console.log(`Removed webhook endpoint ${endpoint.id} (${endpoint.url}) of ${endpoint.org}.`);
    });

  webhooks
    .command('test')
    .description('Send the endpoint a ping event (delivered by a running compplan serve)')
    .argument('<id>', 'the endpoint id (wh_…), as webhooks list shows it')
    .action(async (id: string) => {
      const { testWebhookEndpointById } = await service();
      const endpoint = await withDatabase(configFromEnvironment(), ({ db }) =>
        testWebhookEndpointById(db, id),
      );
      console.log(
        `Recorded a ping for ${endpoint.id} (${endpoint.url}); a running compplan serve sends it within seconds. See webhooks list --org ${endpoint.org}.`,
      );
    });
}
