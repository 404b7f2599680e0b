// Settings → Connections → Webhooks (docs/webhooks.md, docs/web-app.md), for owners and
// administrators alike, as API keys are. Endpoints are added, tested and removed through
// the same service as `compplan webhooks …`; the signing secret is shown once, after the
// POST that made it (POST/redirect/GET, sealed in the session's one-time view meanwhile).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keepForOneView, takeOneView } from '../../sessions/one-time-view.js';
import { EVENT_TYPES } from '../../webhooks/events.js';
import { findWebhookEndpoint, type WebhookEndpoint } from '../../webhooks/repository.js';
import {
  addWebhookEndpoint,
  listOrganizationWebhooks,
  removeWebhookEndpoint,
  testWebhookEndpoint,
  WebhookManagementError,
} from '../../webhooks/service.js';
import type { Page } from '../context.js';
import { formField, redirect, sendPage } from '../http.js';
import { PAGES, RESENT, routeOf } from '../paths.js';
import {
  EVENT_FIELD,
  type NewEndpointView,
  removeWebhookPage,
  webhooksPage,
} from './webhooks.views.js';

// The address filter's messages tell the operator what to set (WEBHOOK_ALLOW_PRIVATE_NETWORKS,
// as the command line shows them). A web user cannot set it, and is told whom to ask.
const FOR_WEB_USERS: [RegExp, string][] = [
  [
    /; allow its range with WEBHOOK_ALLOW_PRIVATE_NETWORKS/g,
    '; ask whoever runs this compplan server to allow private addresses for webhooks',
  ],
  [
    /networks named in WEBHOOK_ALLOW_PRIVATE_NETWORKS/g,
    'private networks that whoever runs this compplan server has allowed',
  ],
  [/WEBHOOK_ALLOW_PRIVATE_NETWORKS/g, 'the private networks this compplan server allows'],
];

/** A webhook service message in the words of the web page's user. */
export function webMessage(message: string): string {
  return FOR_WEB_USERS.reduce((text, [setting, words]) => text.replace(setting, words), message);
}

const WEBHOOKS_PAGE = PAGES.webhooks;
const WEBHOOKS = routeOf(WEBHOOKS_PAGE);

export const webhooksPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { added?: NewEndpointView; error?: string; url?: string } = {},
  ) {
    const base = view(request);
    const endpoints = await listOrganizationWebhooks(app.db, base.organization.slug);
    const query = (request.query ?? {}) as Record<string, unknown>;
    // A flag, not the URL: the page never repeats text that a link could carry.
    const removed = query.removed !== undefined;
    const tested = endpoints.find((endpoint) => endpoint.id === query.tested)?.url;
    return sendPage(
      reply,
      status,
      webhooksPage({
        ...base,
        ...extra,
        endpoints,
        removed,
        tested,
        resent: query[RESENT] !== undefined,
      }),
    );
  }

  /** The signed-in organisation and the endpoint id of the path. */
  const target = (request: FastifyRequest) =>
    [app.db, view(request).organization.id, (request.params as { id: string }).id] as const;

  app.get(WEBHOOKS, signedIn, async (request, reply) => {
    const shown = await takeOneView<NewEndpointView>(app.db, context.sessionIdOf(request));
    return render(request, reply, 200, shown?.kind === 'webhook-secret' ? { added: shown } : {});
  });

  app.post(WEBHOOKS, signedInPost, async (request, reply) => {
    const { organization, user } = view(request);
    const url = formField(request, 'url');
    try {
      const added = await addWebhookEndpoint(
        app.db,
        {
          org: organization.slug,
          url,
          events: EVENT_TYPES.filter(
            (type) => formField(request, `${EVENT_FIELD}${type}`) === 'on',
          ),
          allowPrivateNetworks: context.settings.webhooks.allowPrivateNetworks,
        },
        new Date(),
        context.actorOf(request),
      );
      request.log.info({ endpointId: added.id, userId: user.id }, 'webhook endpoint added');
      const shown: NewEndpointView = {
        kind: 'webhook-secret',
        url: added.url,
        secret: added.secret,
      };
      await keepForOneView(app.db, context.sessionIdOf(request), shown);
      return redirect(reply, WEBHOOKS_PAGE);
    } catch (error) {
      if (!(error instanceof WebhookManagementError)) throw error;
      return render(request, reply, 422, { error: webMessage(error.message), url });
    }
  });

  app.post(`${WEBHOOKS}/:id/test`, signedInPost, async (request, reply) => {
    let endpoint: WebhookEndpoint | undefined;
    try {
      endpoint = await testWebhookEndpoint(...target(request));
    } catch (error) {
      // Disabled: the page says so, and offers no test (a form sent from an older page).
      if (error instanceof WebhookManagementError) return redirect(reply, WEBHOOKS_PAGE);
      throw error;
    }
    if (!endpoint) return context.notFound(reply);
    // This instance's dispatcher, if it runs one, sends it now rather than at its next poll.
    if (app.hasDecorator('webhooks')) app.webhooks.poke();
    return redirect(reply, `${WEBHOOKS_PAGE}?tested=${encodeURIComponent(endpoint.id)}`);
  });

  app.get(`${WEBHOOKS}/:id/remove`, signedIn, async (request, reply) => {
    const endpoint = await findWebhookEndpoint(...target(request));
    if (!endpoint) return context.notFound(reply);
    return sendPage(reply, 200, removeWebhookPage({ ...view(request), endpoint }));
  });

  app.post(`${WEBHOOKS}/:id/remove`, signedInPost, async (request, reply) => {
    const endpoint = await removeWebhookEndpoint(...target(request), context.actorOf(request));
    if (!endpoint) return context.notFound(reply);
    request.log.info(
      { endpointId: endpoint.id, userId: view(request).user.id },
      'webhook endpoint removed',
    );
    return redirect(reply, `${WEBHOOKS_PAGE}?removed`);
  });
};
