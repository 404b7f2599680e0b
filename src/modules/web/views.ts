// The web application's pages. Server-rendered HTML, one local stylesheet and one small
// script (the copy button, the generate form's merit cycle choice); every value is
// escaped by `html`.
import type { ApiKey } from '../api-keys/repository.js';
import { KEY_NAME_MAX_LENGTH } from '../api-keys/service.js';
import type { Organization } from '../organizations/repository.js';
import { FORM_ID_FIELD, newFormId } from '../sessions/forms.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../users/password.js';
import type { User } from '../users/repository.js';
import { ASSETS } from './assets.js';
import { html, type SafeHtml } from './html.js';
import {
  type KeyChoices,
  lastUsedFrom,
  restrictionCells,
  restrictionFields,
  rolledNotice,
  rollForm,
} from './key-restrictions.js';

export const RESENT_NOTICE =
  'That form had been sent already, so nothing more was done. What it did the first time stands.';

export const ROLE_NAMES = { owner: 'Owner', admin: 'Administrator' } as const;

export interface Signed {
  user: User;
  organization: Organization;
  csrfToken: string;
}

function document(title: string, body: SafeHtml, bodyClass = ''): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · compplan</title>
<link rel="icon" href="${ASSETS.icon.path}" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS.css.path}">
<script src="${ASSETS.js.path}" defer></script>
</head>
<body class="${bodyClass}">
<a class="skip-link" href="#main">Skip to content</a>
${body}
</body>
</html>
`.text;
}

const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/**
 * The hidden fields of a signed-in session's form: its CSRF token, and an id of this one
 * form, so that the same form sent twice does its work once (sessions/forms.ts).
 */
export const sessionFormFields = (token: string) =>
  html`${csrfField(token)}<input type="hidden" name="${FORM_ID_FIELD}" value="${newFormId()}">`;

/** A timestamp for people (UTC, to the minute) that keeps the exact value for machines. */
export function time(iso: string | null, none = 'Never'): SafeHtml {
  if (iso === null) return html`<span class="muted">${none}</span>`;
  const shown = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return html`<time datetime="${iso}" title="${iso}">${shown}</time>`;
}

export function alert(kind: 'error' | 'success' | 'info', message: SafeHtml | string): SafeHtml {
  // Errors interrupt (role=alert); confirmations are announced politely (role=status).
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="notice notice-${kind}" role="${role}">${message}</div>`;
}

/** The compplan mark and name (styled by BRAND_CSS), here and at the top of /docs. */
export function brand(): SafeHtml {
  return html`<span class="brand"><span class="brand-mark" aria-hidden="true">cp</span>compplan</span>`;
}

export type SettingsPage = 'connections' | 'webhooks' | 'roles' | 'users' | 'data' | 'audit';

export function settingsLayout(
  signed: Signed,
  current: SettingsPage,
  title: string,
  content: SafeHtml,
): string {
  const { user, organization } = signed;
  const link = (page: SettingsPage, href: string, label: string) =>
    html`<li><a href="${href}"${page === current ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return document(
    `${title} · Settings`,
    html`<header class="topbar">
  ${brand()}
  <span class="org">${organization.name}</span>
  <div class="account">
    <span class="who">${user.email} <span class="role">${ROLE_NAMES[user.role]}</span></span>
    <form method="post" action="/app/sign-out">${sessionFormFields(signed.csrfToken)}<button type="submit" class="button button-quiet">Sign out</button></form>
  </div>
</header>
<div class="settings">
  <nav class="side" aria-label="Settings">
    <p class="side-title">Settings</p>
    <ul>
      ${link('connections', '/app/settings/connections', 'Connections')}
      ${link('webhooks', '/app/settings/connections/webhooks', 'Webhooks')}
      ${link('roles', '/app/settings/roles', 'Roles & Permissions')}
      ${user.role === 'owner' ? link('users', '/app/settings/users', 'Users') : ''}
      ${link('data', '/app/settings/data', 'Data')}
      ${user.role === 'owner' ? link('audit', '/app/settings/audit-log', 'Audit log') : ''}
    </ul>
  </nav>
  <main id="main" tabindex="-1">
    <h1>${title}</h1>
    ${content}
  </main>
</div>`,
  );
}

export function singleCard(title: string, content: SafeHtml, cardClass = ''): string {
  return document(
    title,
    html`<main id="main" class="card-page" tabindex="-1">
  <div class="card ${cardClass}">
    <p class="card-brand">${brand()}</p>
    <h1>${title}</h1>
    ${content}
  </div>
</main>`,
    'plain',
  );
}

/**
 * A secret shown this once (a new API key, a webhook's signing secret): read-only, with a
 * Copy button and the warning that it cannot be shown again.
 */
export function shownOncePanel(panel: {
  ids: { title: string; warning: string; secret: string };
  title: SafeHtml;
  warning: SafeHtml;
  label: string;
  secret: string;
  after: SafeHtml;
}): SafeHtml {
  const { ids } = panel;
  return html`<section class="panel panel-new-key" aria-labelledby="${ids.title}">
  <h2 id="${ids.title}">${panel.title}</h2>
  <p class="warning" id="${ids.warning}">${panel.warning}</p>
  <div class="secret-row">
    <label for="${ids.secret}" class="visually-hidden">${panel.label}</label>
    <input id="${ids.secret}" class="secret" type="text" value="${panel.secret}" readonly spellcheck="false" autocomplete="off" aria-describedby="${ids.warning}">
    <button type="button" class="button button-primary" data-copy-target="${ids.secret}" data-copied-label="Copied">Copy</button>
  </div>
  <p class="copy-status" role="status" aria-live="polite" id="copy-status"></p>
  ${panel.after}
</section>`;
}

/**
 * The page that asks before a destructive action (revoking a key, removing a webhook
 * endpoint): what it acts on, what follows, a button that does it and a way back.
 */
export function confirmPage(
  signed: Signed,
  page: {
    current: SettingsPage;
    title: string;
    headingId: string;
    question: SafeHtml;
    facts: [term: string, detail: SafeHtml][];
    consequence: string;
    action: string;
    button: string;
    cancel: string;
  },
): string {
  return settingsLayout(
    signed,
    page.current,
    page.title,
    html`<section class="panel panel-danger" aria-labelledby="${page.headingId}">
  <h2 id="${page.headingId}">${page.question}</h2>
  <dl class="facts">
    ${page.facts.map(([term, detail]) => html`<dt>${term}</dt><dd>${detail}</dd>`)}
  </dl>
  <p>${page.consequence}</p>
  <form method="post" action="${page.action}" class="button-row">
    ${sessionFormFields(signed.csrfToken)}
    <button type="submit" class="button button-danger">${page.button}</button>
    <a class="button button-quiet" href="${page.cancel}">Cancel</a>
  </form>
</section>`,
  );
}

/**
 * A line to copy (a curl command, an address): shown whole in a block that scrolls sideways
 * rather than breaking inside a URL, with a Copy button and a live region that says it was
 * copied. `what` names the line for screen readers.
 */
function copyableCode(id: string, text: string, what = 'command'): SafeHtml {
  const label = what.charAt(0).toUpperCase() + what.slice(1);
  return html`<div class="code-block">
  <pre id="${id}" tabindex="0" aria-label="${label}"><code>${text}</code></pre>
  <button type="button" class="button button-quiet button-small" data-copy-target="${id}" data-copy-status="${id}-status" data-copied-label="Copied">Copy<span class="visually-hidden"> the ${what}</span></button>
</div>
<p class="copy-status" role="status" aria-live="polite" id="${id}-status"></p>`;
}

/** GET / for a browser: where to go from here. `origin` is this server as the browser sees it. */
export function homePage(origin: string): string {
  return singleCard(
    'Compensation Planning API',
    html`<p class="lead">This server answers the read-only Compensation Planning External API: merit cycles, their employees and exchange rates, for analytics, HRIS and BI tools.</p>
<ul class="link-list">
  <li><a href="/docs">API reference</a><span class="hint">Every endpoint, parameter and error; try them out with your key.</span></li>
  <li><a href="/app">Web application</a><span class="hint">Sign in and generate an API key under Settings → Connections.</span></li>
  <li><a href="/openapi.json">OpenAPI document</a><span class="hint">For code generators, Postman or an API gateway.</span></li>
</ul>
<h2>Try it</h2>
<p>With your key in place of <code>cpk_…</code>; the answer is <code>{"message":"pong"}</code>.</p>
${copyableCode('try-ping', `curl -H "x-api-key: cpk_…" ${origin}/ping`)}`,
    'card-wide',
  );
}

export function signInPage(input: {
  csrfToken: string;
  email?: string;
  error?: string;
  notice?: string;
}): string {
  return singleCard(
    'Sign in',
    html`${input.error && alert('error', input.error)}${input.notice && alert('info', input.notice)}
<form method="post" action="/app/sign-in" class="stack" novalidate>
  ${csrfField(input.csrfToken)}
  <div class="field">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}"${input.email ? '' : html` autofocus`}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_MAX_LENGTH}"${input.email ? html` autofocus` : ''}>
  </div>
  <button type="submit" class="button button-primary button-wide">Sign in</button>
</form>
<p class="hint">New here? An owner of your organisation creates your account and gives you a one-time password.</p>`,
  );
}

export function choosePasswordPage(input: { csrfToken: string; email: string; error?: string }) {
  return singleCard(
    'Choose your password',
    html`<p>You signed in as <strong>${input.email}</strong> with a one-time password. Choose your own password to continue.</p>
${input.error && alert('error', input.error)}
<form method="post" action="/app/password" class="stack" novalidate>
  ${sessionFormFields(input.csrfToken)}
  <input type="text" name="username" autocomplete="username" value="${input.email}" hidden>
  <div class="field">
    <label for="new-password">New password</label>
    <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" aria-describedby="password-rules" autofocus>
    <p class="hint" id="password-rules">At least ${PASSWORD_MIN_LENGTH} characters. A phrase of a few words is easy to remember and hard to guess.</p>
  </div>
  <div class="field">
    <label for="confirm-password">Repeat the new password</label>
    <input id="confirm-password" name="confirmation" type="password" autocomplete="new-password" required maxlength="${PASSWORD_MAX_LENGTH}">
  </div>
  <button type="submit" class="button button-primary button-wide">Save password</button>
</form>`,
  );
}

export function messagePage(
  title: string,
  message: string,
  link?: { href: string; label: string },
) {
  return singleCard(
    title,
    html`<p>${message}</p>${link && html`<p><a class="button button-primary" href="${link.href}">${link.label}</a></p>`}`,
  );
}

export interface ConnectionsView extends Signed {
  keys: ApiKey[];
  /** Where the API answers, for the curl example: this server's own origin. */
  apiBase: string;
  /** A key just generated or rolled (`rolledUntil`: the old secret's grace end). */
  created?: { name: string; key: string; rolledUntil?: string } | undefined;
  revoked?: ApiKey | undefined;
  /** The form that led here had been sent before: nothing more was done. */
  resent?: boolean;
  error?: string | undefined;
  name?: string | undefined;
  /** The organisation's cycles and column keys, for the generate form. */
  choices: KeyChoices;
}

/** Why generating is not possible for this user now, in words; null when it is. */
function generateBlockedReason(signed: Signed): SafeHtml | null {
  if (signed.organization.apiKeysEnabled) return null;
  return signed.user.role === 'owner'
    ? html`Generating API keys is turned off for ${signed.organization.name}. Turn on <em>Allow administrators to generate API keys</em> under <a href="/app/settings/roles">Roles &amp; Permissions</a> to generate one.`
    : html`Generating API keys is turned off for ${signed.organization.name}. An owner can allow administrators to generate API keys under <a href="/app/settings/roles">Roles &amp; Permissions</a>.`;
}

export function connectionsPage(view: ConnectionsView): string {
  const blocked = generateBlockedReason(view);
  const created = view.created;
  const newKey =
    created &&
    shownOncePanel({
      ids: { title: 'new-key-title', warning: 'new-key-warning', secret: 'new-key-secret' },
      title: html`Your new API key “${created.name}”`,
      warning: html`<strong>Copy this key now.</strong> For your security it cannot be shown again: if you lose it, generate a new key and revoke this one.`,
      label: 'API key',
      secret: created.key,
      after: html`<p class="hint">Send it in the <code>x-api-key</code> header. Try it:</p>
  ${copyableCode('try-new-key', `curl -H "x-api-key: ${created.key}" ${view.apiBase}/ping`)}`,
    });

  const cycleNames = new Map(view.choices.cycles.map((cycle) => [cycle.id, cycle.name]));
  const now = Date.now();
  // Five columns, each value with what belongs to it under it (the prefix and creation
  // under the name, the address under the last use, the expiry under the status): a
  // desktop window holds them all; a phone shows each key as a block (assets.ts, "stacked").
  const rows = view.keys.map((key) => {
    const cells = restrictionCells(key, cycleNames, now);
    return html`<tr>
  <th scope="row">${key.name} <span class="sub"><code>${key.prefix}…</code></span> <span class="sub">Created ${time(key.createdAt)}</span></th>
  ${cells.reads}
  <td data-label="Last used"><div>${time(key.lastUsedAt)} ${lastUsedFrom(key)}</div></td>
  ${cells.status}
  <td class="actions">${key.revokedAt === null ? html`<a class="button button-quiet button-small" href="/app/settings/connections/keys/${key.id}/roll">Roll<span class="visually-hidden"> ${key.name}</span></a> <a class="button button-danger-quiet button-small" href="/app/settings/connections/keys/${key.id}/revoke">Revoke<span class="visually-hidden"> ${key.name}</span></a>` : ''}</td>
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
  <form method="post" action="/app/settings/connections/keys" class="inline-form">
    ${sessionFormFields(view.csrfToken)}
    <fieldset${blocked ? html` disabled aria-describedby="generate-blocked"` : ''}>
      <legend class="visually-hidden">New API key</legend>
      <div class="field">
        <label for="key-name">Key name</label>
        <input id="key-name" name="name" type="text" required maxlength="${KEY_NAME_MAX_LENGTH}" placeholder="e.g. Looker export" value="${view.name ?? ''}" aria-describedby="key-name-hint">
        <p class="hint" id="key-name-hint">What the key is for, so that you can tell keys apart later.</p>
      </div>
      ${restrictionFields(view.choices)}
      <button type="submit" class="button button-primary">Generate API Key</button>
    </fieldset>
  </form>
</section>
<section class="panel" aria-labelledby="keys-title">
  <h2 id="keys-title">API keys</h2>
  ${
    view.keys.length === 0
      ? html`<p class="muted">No API keys yet.</p>`
      : html`<div class="table-wrap"><table class="key-list stacked">
  <thead><tr><th scope="col">Name</th><th scope="col">Reads</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
${rows}
  </tbody>
</table></div>`
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
    action: `/app/settings/connections/keys/${key.id}/revoke`,
    button: 'Revoke key',
    cancel: '/app/settings/connections',
  });
}

export function rollPage(view: Signed & { key: ApiKey }): string {
  return settingsLayout(
    view,
    'connections',
    'Roll API key',
    rollForm(view.key, sessionFormFields(view.csrfToken)),
  );
}

/**
 * What the saved permission now means, true for everyone it concerns: when it is off,
 * nobody generates keys (owners neither), as the service refuses them all.
 */
function savedPermission(organization: Organization): string {
  return organization.apiKeysEnabled
    ? 'Saved: owners and administrators can generate API keys.'
    : `Saved: no one can generate API keys for ${organization.name}, owners included. Keys already generated keep working until they are revoked.`;
}

export function rolesPage(
  view: Signed & { saved?: boolean; resent?: boolean; error?: string },
): string {
  const isOwner = view.user.role === 'owner';
  const enabled = view.organization.apiKeysEnabled;
  return settingsLayout(
    view,
    'roles',
    'Roles & Permissions',
    html`${view.error && alert('error', view.error)}
${view.resent && alert('info', RESENT_NOTICE)}
${view.saved && alert('success', savedPermission(view.organization))}
<section class="panel" aria-labelledby="roles-title">
  <h2 id="roles-title">Roles</h2>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Role</th><th scope="col">What it can do</th></tr></thead>
    <tbody>
      <tr><th scope="row">Owner</th><td>Everything administrators can, and change Roles &amp; Permissions.</td></tr>
      <tr><th scope="row">Administrator</th><td>See and revoke API keys under Connections; generate them when the permission below allows it.</td></tr>
    </tbody>
  </table></div>
</section>
<section class="panel" aria-labelledby="permissions-title">
  <h2 id="permissions-title">Permissions</h2>
  <form method="post" action="/app/settings/roles">
    ${sessionFormFields(view.csrfToken)}
    <fieldset${isOwner ? '' : html` disabled aria-describedby="owner-only"`}>
      <legend class="visually-hidden">Permissions</legend>
      <div class="switch-row">
        <input id="allow-admin-keys" name="allowAdministratorsToGenerateApiKeys" type="checkbox" role="switch" value="on"${enabled ? html` checked` : ''} aria-describedby="allow-admin-keys-hint">
        <div>
          <label for="allow-admin-keys">Allow administrators to generate API keys</label>
          <p class="hint" id="allow-admin-keys-hint">When this is off, no new API keys can be generated for ${view.organization.name}. Keys already generated keep working until they are revoked.</p>
        </div>
      </div>
      ${isOwner ? html`<button type="submit" class="button button-primary">Save</button>` : html`<p class="notice notice-info" id="owner-only">Only an owner can change permissions.</p>`}
    </fieldset>
  </form>
</section>`,
  );
}
