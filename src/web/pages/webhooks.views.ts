// Settings → Connections → Webhooks: the organisation's endpoints with their last
// deliveries, the add form, the signing secret shown once, and removal's confirmation.
import { EVENT_TYPES } from '../../webhooks/events.js';
import type { WebhookDelivery, WebhookEndpoint } from '../../webhooks/repository.js';
import type { ListedWebhookEndpoint } from '../../webhooks/service.js';
import type { Signed } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import {
  alert,
  confirmPage,
  listTable,
  RESENT_NOTICE,
  sessionFormFields,
  settingsLayout,
  shownOncePanel,
  time,
} from '../layout.js';
import { PAGES } from '../paths.js';

const WEBHOOKS_PAGE = PAGES.webhooks;
/** One checkbox per event type: the form parser keeps one value per name. */
export const EVENT_FIELD = 'event-';

/** What the page shows once after the post that added an endpoint (POST/redirect/GET). */
export interface NewEndpointView {
  kind: 'webhook-secret';
  url: string;
  secret: string;
}

export interface WebhooksView extends Signed {
  endpoints: ListedWebhookEndpoint[];
  added?: NewEndpointView | undefined;
  removed?: boolean;
  tested?: string | undefined;
  resent?: boolean;
  error?: string | undefined;
  url?: string | undefined;
}

const STATUS_BADGES: Record<WebhookEndpoint['status'], SafeHtml> = {
  active: html`<span class="badge badge-active">Active</span>`,
  failing: html`<span class="badge badge-soon">Failing</span>`,
  disabled: html`<span class="badge badge-revoked">Disabled</span>`,
};

const STATE_NAMES: Record<WebhookDelivery['state'], string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

function deliveriesTable(endpoint: ListedWebhookEndpoint): SafeHtml {
  if (endpoint.deliveries.length === 0) return html`<p class="muted">No deliveries yet.</p>`;
  const rows = endpoint.deliveries.map(
    (delivery) => html`<tr>
  <th scope="row"><code>${delivery.eventType}</code></th>
  <td data-label="Status">${STATE_NAMES[delivery.state]}${delivery.lastStatus === null ? '' : ` (HTTP ${delivery.lastStatus})`}</td>
  <td data-label="Attempts">${delivery.attempts}</td>
  <td data-label="Last attempt">${time(delivery.lastAttemptAt, 'Not yet')}</td>
  <td data-label="Next retry">${time(delivery.nextAttemptAt, '—')}</td>
  <td data-label="Answer" class="excerpt">${delivery.lastResponse ?? ''}</td>
</tr>`,
  );
  return listTable({
    className: 'delivery-list',
    caption: html`Last deliveries to ${endpoint.url}`,
    columns: ['Event', 'Status', 'Attempts', 'Last attempt', 'Next retry', 'Answer'],
    rows,
  });
}

function endpointPanel(endpoint: ListedWebhookEndpoint, csrfToken: string): SafeHtml {
  const base = `${WEBHOOKS_PAGE}/${endpoint.id}`;
  return html`<section class="panel" aria-label="Endpoint ${endpoint.url}">
  <h3 class="endpoint-url"><code>${endpoint.url}</code> ${STATUS_BADGES[endpoint.status]}</h3>
  <dl class="facts">
    <dt>Events</dt><dd>${endpoint.events.map((type) => html`<code>${type}</code> `)}</dd>
    <dt>Added</dt><dd>${time(endpoint.createdAt)}</dd>
  </dl>
  ${endpoint.status === 'failing' ? html`<p class="notice notice-error">Its last delivery failed after every retry (about three days). New events are still sent; the next success marks it active.</p>` : ''}
  ${endpoint.status === 'disabled' ? html`<p class="notice notice-info">It answered 410 Gone, so nothing more is sent to it. Remove it and add it again to resume.</p>` : ''}
  <h4>Last deliveries</h4>
  ${deliveriesTable(endpoint)}
  <div class="button-row endpoint-actions">
    ${
      endpoint.status === 'disabled'
        ? ''
        : html`<form method="post" action="${base}/test">${sessionFormFields(csrfToken)}<button type="submit" class="button button-quiet button-small">Send test ping<span class="visually-hidden"> to ${endpoint.url}</span></button></form>`
    }
    <a class="button button-danger-quiet button-small" href="${base}/remove">Remove<span class="visually-hidden"> ${endpoint.url}</span></a>
  </div>
</section>`;
}

export function webhooksPage(view: WebhooksView): string {
  const added = view.added;
  const secretPanel =
    added &&
    shownOncePanel({
      ids: {
        title: 'new-secret-title',
        warning: 'new-secret-warning',
        secret: 'new-webhook-secret',
      },
      title: html`Signing secret for ${added.url}`,
      warning: html`<strong>Copy this secret now.</strong> It cannot be shown again: if you lose it, remove the endpoint and add it again.`,
      label: 'Signing secret',
      secret: added.secret,
      after: html`<p class="hint">Verify every request with it using a Standard Webhooks library (headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>).</p>`,
    });
  const boxes = EVENT_TYPES.map(
    (type) =>
      html`<label class="check"><input type="checkbox" name="${EVENT_FIELD}${type}" value="on" checked> <code>${type}</code></label>`,
  );
  return settingsLayout(
    view,
    'webhooks',
    'Webhooks',
    html`<p class="lead">Webhooks tell your systems when an import changed the data of ${view.organization.name}: compplan sends a signed POST to each endpoint, which then reads the changes through the API.</p>
${view.error && alert('error', view.error)}
${view.resent && alert('info', RESENT_NOTICE)}
${view.removed && alert('success', 'Removed the endpoint. Nothing more is sent to it.')}
${view.tested && alert('success', html`A ping is on its way to <code>${view.tested}</code>; it shows under its last deliveries within seconds.`)}
${secretPanel}
<section class="panel" aria-labelledby="add-title">
  <h2 id="add-title">Add endpoint</h2>
  <form method="post" action="${WEBHOOKS_PAGE}" class="inline-form">
    ${sessionFormFields(view.csrfToken)}
    <div class="field">
      <label for="webhook-url">Endpoint URL</label>
      <input id="webhook-url" name="url" type="text" inputmode="url" required maxlength="2048" placeholder="https://hooks.example.com/compplan" value="${view.url ?? ''}" aria-describedby="webhook-url-hint">
      <p class="hint" id="webhook-url-hint">An https:// address reachable on the internet; private and local addresses are refused.</p>
    </div>
    <div class="field">
      <p class="group-label" id="events-label">Events</p>
      <div role="group" aria-labelledby="events-label">${boxes}</div>
    </div>
    <button type="submit" class="button button-primary">Add endpoint</button>
  </form>
</section>
<section aria-labelledby="endpoints-title">
  <h2 id="endpoints-title">Endpoints</h2>
  ${view.endpoints.length === 0 ? html`<p class="muted">No webhook endpoints yet.</p>` : view.endpoints.map((endpoint) => endpointPanel(endpoint, view.csrfToken))}
</section>`,
  );
}

export function removeWebhookPage(view: Signed & { endpoint: WebhookEndpoint }): string {
  const { endpoint } = view;
  return confirmPage(view, {
    current: 'webhooks',
    title: 'Remove webhook endpoint',
    headingId: 'remove-title',
    question: html`Remove <code>${endpoint.url}</code>?`,
    facts: [
      ['Events', html`${endpoint.events.map((type) => html`<code>${type}</code> `)}`],
      ['Added', time(endpoint.createdAt)],
    ],
    consequence:
      'Nothing more is sent to it, including deliveries still waiting for a retry. Removing cannot be undone.',
    action: `${WEBHOOKS_PAGE}/${endpoint.id}/remove`,
    button: 'Remove endpoint',
    cancel: WEBHOOKS_PAGE,
  });
}
