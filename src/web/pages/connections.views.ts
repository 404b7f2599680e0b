// Settings → Connections: the generate form, the new key shown once, the key list, the BI
// tools' panel; the revoke confirmation and the roll page (pages/connections.ts).
import type { ApiKey } from '../../api-keys/repository.js';
import { KEY_NAME_MAX_LENGTH } from '../../api-keys/service.js';
import type { Signed } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import {
  alert,
  confirmPage,
  copyableCode,
  listTable,
  RESENT_NOTICE,
  sessionFormFields,
  settingsLayout,
  shownOncePanel,
  time,
} from '../layout.js';
import { PAGES } from '../paths.js';
import {
  EMPTY_KEY_FORM,
  type KeyChoices,
  type KeyForm,
  lastUsedFrom,
  type NewKeyReads,
  newKeyFacts,
  restrictionCells,
  restrictionFields,
  rolledNotice,
  rollForm,
  type SliceCount,
} from './connections.restrictions.js';

/**
 * What Connections shows once, after the post that generated or rolled a key
 * (POST/redirect/GET); `rolledUntil`: the old secret's grace end, for a roll.
 */
export interface NewKeyView {
  name: string;
  key: string;
  rolledUntil?: string;
  /** What the key reads, until when and from where, repeated under the secret. */
  reads?: NewKeyReads;
}

export interface ConnectionsView extends Signed {
  keys: ApiKey[];
  /** Where the API answers, for the curl example: this server's own origin. */
  apiBase: string;
  /** A key just generated or rolled (`rolledUntil`: the old secret's grace end). */
  created?: NewKeyView | undefined;
  revoked?: ApiKey | undefined;
  /** The form that led here had been sent before: nothing more was done. */
  resent?: boolean;
  error?: string | undefined;
  /** The generate form as it was sent, when it was refused: shown again as it was. */
  form?: KeyForm | undefined;
  /** The organisation's cycles and columns, for the generate form. */
  choices: KeyChoices;
  /** What the form's slice reads today, after "Count employees". */
  count?: SliceCount | undefined;
}

/** Why generating is not possible for this user now, in words; null when it is. */
function generateBlockedReason(signed: Signed): SafeHtml | null {
  if (signed.organization.apiKeysEnabled) return null;
  return signed.user.role === 'owner'
    ? html`Generating API keys is turned off for ${signed.organization.name}. Turn on <em>Allow administrators to generate API keys</em> under <a href="${PAGES.roles}">Roles &amp; Permissions</a> to generate one.`
    : html`Generating API keys is turned off for ${signed.organization.name}. An owner can allow administrators to generate API keys under <a href="${PAGES.roles}">Roles &amp; Permissions</a>.`;
}

export function connectionsPage(view: ConnectionsView): string {
  const blocked = generateBlockedReason(view);
  const created = view.created;
  const cycleNames = new Map(view.choices.cycles.map((cycle) => [cycle.id, cycle.name]));
  const form = view.form ?? EMPTY_KEY_FORM;
  const newKey =
    created &&
    shownOncePanel({
      ids: { title: 'new-key-title', warning: 'new-key-warning', secret: 'new-key-secret' },
      title: html`Your new API key “${created.name}”`,
      warning: html`<strong>Copy this key now.</strong> For your security it cannot be shown again: if you lose it, generate a new key and revoke this one.`,
      label: 'API key',
      secret: created.key,
      after: html`${created.reads && newKeyFacts(created.reads, cycleNames)}
  <p class="hint">Send it in the <code>x-api-key</code> header. Try it:</p>
  ${copyableCode('try-new-key', `curl -H "x-api-key: ${created.key}" ${view.apiBase}/ping`)}`,
    });

  const now = Date.now();
  // Five columns, each value with what belongs to it under it (the prefix and creation
  // under the name, the address under the last use, the expiry under the status): a
  // desktop window holds them all; a phone shows each key as a block (listTable).
  const rows = view.keys.map((key) => {
    const cells = restrictionCells(key, cycleNames, now);
    return html`<tr>
  <th scope="row">${key.name} <span class="sub"><code>${key.prefix}…</code></span> <span class="sub">Created ${time(key.createdAt)}</span></th>
  ${cells.reads}
  <td data-label="Last used"><div>${time(key.lastUsedAt)} ${lastUsedFrom(key)}</div></td>
  ${cells.status}
  <td class="actions">${key.revokedAt === null ? html`<a class="button button-quiet button-small" href="${PAGES.connections}/keys/${key.id}/roll">Roll<span class="visually-hidden"> ${key.name}</span></a> <a class="button button-danger-quiet button-small" href="${PAGES.connections}/keys/${key.id}/revoke">Revoke<span class="visually-hidden"> ${key.name}</span></a>` : ''}</td>
</tr>`;
  });

  return settingsLayout(
    view,
    'connections',
    'Connections',
    html`<p class="lead">API keys connect analytics, HRIS and BI tools to the Compensation Planning API. A key reads every merit cycle of ${view.organization.name}, unless you give it less.</p>
${view.error && alert('error', view.error)}
${view.resent && alert('info', RESENT_NOTICE)}
${created?.rolledUntil && alert('success', rolledNotice(created.name, created.rolledUntil))}
${view.revoked && alert('success', html`Revoked “${view.revoked.name}” (<code>${view.revoked.prefix}…</code>). Requests with it are refused within 5 seconds.`)}
${newKey}
<section class="panel" aria-labelledby="generate-title">
  <h2 id="generate-title">Generate API Key</h2>
  ${blocked && html`<p class="notice notice-info" id="generate-blocked">${blocked}</p>`}
  <form method="post" action="${PAGES.connections}/keys" class="inline-form">
    ${sessionFormFields(view.csrfToken)}
    <fieldset${blocked ? html` disabled aria-describedby="generate-blocked"` : ''}>
      <legend class="visually-hidden">New API key</legend>
      <div class="field">
        <label for="key-name">Key name</label>
        <input id="key-name" name="name" type="text" required maxlength="${KEY_NAME_MAX_LENGTH}" placeholder="e.g. Looker export" value="${form.name}" aria-describedby="key-name-hint">
        <p class="hint" id="key-name-hint">What the key is for, so that you can tell keys apart later.</p>
      </div>
      ${restrictionFields(view.choices, form, view.count)}
      <div class="button-row">
        <button type="submit" class="button button-primary">Generate API Key</button>
        <button type="submit" class="button button-quiet" formaction="${PAGES.connections}/keys/count" formnovalidate>Count employees</button>
      </div>
    </fieldset>
  </form>
</section>
<section class="panel" aria-labelledby="keys-title">
  <h2 id="keys-title">API keys</h2>
  ${
    view.keys.length === 0
      ? html`<p class="muted">No API keys yet.</p>`
      : listTable({
          className: 'key-list',
          columns: ['Name', 'Reads', 'Last used', 'Status', { label: 'Actions', hidden: true }],
          rows,
        })
  }
</section>
<section class="panel" aria-labelledby="bi-tools-title">
  <h2 id="bi-tools-title">Excel, Power BI and Tableau</h2>
  <p>Connect them with no code: choose <em>OData feed</em> in the tool, give it this address, and sign in with <em>Basic</em> authentication, any user name and an API key as the password.</p>
  ${copyableCode('odata-feed', `${view.apiBase}/odata/v4/`, 'feed address')}
  <p class="hint">Excel: Data → Get Data → From Other Sources → From OData Feed. Power BI Desktop: Home → Get data → OData feed. Tableau: Connect → To a Server → OData.</p>
</section>`,
  );
}

export function revokePage(view: Signed & { key: ApiKey }): string {
  const { key } = view;
  return confirmPage(view, {
    current: 'connections',
    title: 'Revoke API key',
    headingId: 'revoke-title',
    question: html`Revoke “${key.name}”?`,
    facts: [
      ['Prefix', html`<code>${key.prefix}…</code>`],
      ['Created', time(key.createdAt)],
      ['Last used', time(key.lastUsedAt)],
    ],
    consequence:
      'Every application that uses this key stops getting data within 5 seconds. Revoking cannot be undone.',
    action: `${PAGES.connections}/keys/${key.id}/revoke`,
    button: 'Revoke key',
    cancel: PAGES.connections,
  });
}

/** The Roll page; after a refused roll, with why and the grace period chosen. */
export function rollPage(
  view: Signed & { key: ApiKey; grace?: string; error?: string | undefined },
): string {
  return settingsLayout(
    view,
    'connections',
    'Roll API key',
    html`${view.error && alert('error', view.error)}
${rollForm(view.key, sessionFormFields(view.csrfToken), view.grace)}`,
  );
}
