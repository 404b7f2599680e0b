// Runs this instance's webhook dispatcher while the app runs (only `compplan serve` asks
// for it: buildApp's serve.deliverWebhooks), with its Prometheus metrics. preClose stops it
// before the database closes: attempts in flight are interrupted and their leases given
// back (dispatcher.ts).
import fp from 'fastify-plugin';
import { Counter, Gauge } from 'prom-client';
import type { WebhookConfig } from '../config.js';
import { toIso } from '../db/values.js';
import { type DeliveryOutcome, WebhookDispatcher } from './dispatcher.js';
import type { WebhookSchedule } from './schedule.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookDispatcher;
  }
}

const OUTCOMES: DeliveryOutcome[] = ['delivered', 'retrying', 'failed', 'disabled'];

export interface WebhooksPluginOptions {
  config: WebhookConfig;
  /** The retry delays, lease and poll; the real schedule when absent (tests give shorter). */
  schedule?: WebhookSchedule;
}

export default fp<WebhooksPluginOptions>(
  async (app, { config, schedule }) => {
    const registry = app.metrics.registry;
    const deliveries = new Counter({
      name: 'compplan_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retrying (failed, tried again later), failed (the last retry failed: endpoint marked failing), disabled (410 Gone).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    // Every outcome from the start, at 0: a rate over a series that appears late is wrong.
    for (const outcome of OUTCOMES) deliveries.inc({ outcome }, 0);
    new Gauge({
      name: 'compplan_webhook_oldest_pending_seconds',
      help: 'Age of the oldest webhook delivery not yet delivered nor given up (0: none); it grows while receivers fail or no instance delivers.',
      registers: [registry],
      async collect() {
        const oldest = await app.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.min('created_at').as('at'))
          .where('state', '=', 'pending')
          .executeTakeFirst();
        this.set(oldest?.at ? Math.max(0, (Date.now() - Date.parse(toIso(oldest.at))) / 1000) : 0);
      },
    });

    const dispatcher = new WebhookDispatcher({
      database: app.database,
      allowPrivateNetworks: config.allowPrivateNetworks,
      ...(schedule && { schedule }),
      log: app.log.child({ component: 'webhooks' }),
      onOutcome: (outcome) => deliveries.inc({ outcome }),
    });
    app.decorate('webhooks', dispatcher);
    app.addHook('onReady', async () => dispatcher.start());
    app.addHook('preClose', async () => dispatcher.close());
  },
  { name: 'webhooks', dependencies: ['database', 'metrics'] },
);
