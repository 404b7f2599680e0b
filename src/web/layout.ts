// The web application's layout: the document and its assets, the settings chrome (top bar,
// navigation), the single-card pages (sign-in, messages), list tables, the shown-once
// panel, the confirm page and a line to copy. Server-rendered HTML; every value is escaped
// by `html`. Pages (pages/*.views.ts) build their content from these.
import { FORM_ID_FIELD, newFormId } from '../sessions/forms.js';
import { webAssets } from './assets.js';
import type { Signed } from './context.js';
import { html, type SafeHtml } from './html.js';
import { PAGES } from './paths.js';

export const RESENT_NOTICE =
  'That form had been sent already, so nothing more was done. What it did the first time stands.';

export const ROLE_NAMES = { owner: 'Owner', admin: 'Administrator' } as const;

function document(title: string, body: SafeHtml, bodyClass = ''): string {
  const assets = webAssets();
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · compplan</title>
<link rel="icon" href="${assets.icon.path}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css.path}">
<script src="${assets.js.path}" defer></script>
</head>
<body class="${bodyClass}">
<a class="skip-link" href="#main">Skip to content</a>
${body}
</body>
</html>
`.text;
}

export const csrfField = (token: string) =>
  html`<input type="hidden" name="_csrf" value="${token}">`;

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
    <form method="post" action="${PAGES.signOut}">${sessionFormFields(signed.csrfToken)}<button type="submit" class="button button-quiet">Sign out</button></form>
  </div>
</header>
<div class="settings">
  <nav class="side" aria-label="Settings">
    <p class="side-title">Settings</p>
    <ul>
      ${link('connections', PAGES.connections, 'Connections')}
      ${link('webhooks', PAGES.webhooks, 'Webhooks')}
      ${link('roles', PAGES.roles, 'Roles & Permissions')}
      ${user.role === 'owner' ? link('users', PAGES.users, 'Users') : ''}
      ${link('data', PAGES.data, 'Data')}
      ${user.role === 'owner' ? link('audit', PAGES.auditLog, 'Audit log') : ''}
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

export type Column = string | { label: string; className?: 'number'; hidden?: boolean };

const headCell = (column: Column) => {
  if (typeof column === 'string') return html`<th scope="col">${column}</th>`;
  const label = column.hidden
    ? html`<span class="visually-hidden">${column.label}</span>`
    : column.label;
  return html`<th scope="col"${column.className ? html` class="${column.className}"` : ''}>${label}</th>`;
};

/**
 * A list (keys, users, merit cycles, deliveries, audit entries): a table on a desktop, one
 * block per row on a phone, each value beside its column's name (`stacked`, app.css; each
 * row's cells carry `data-label`).
 */
export function listTable(list: {
  className: string;
  caption?: SafeHtml;
  columns: Column[];
  rows: SafeHtml[];
}): SafeHtml {
  return html`<div class="table-wrap"><table class="${list.className} stacked">
  ${list.caption && html`<caption class="visually-hidden">${list.caption}</caption>`}
  <thead><tr>${list.columns.map(headCell)}</tr></thead>
  <tbody>
${list.rows}
  </tbody>
</table></div>`;
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
export function copyableCode(id: string, text: string, what = 'command'): SafeHtml {
  const label = what.charAt(0).toUpperCase() + what.slice(1);
  return html`<div class="code-block">
  <pre id="${id}" tabindex="0" aria-label="${label}"><code>${text}</code></pre>
  <button type="button" class="button button-quiet button-small" data-copy-target="${id}" data-copy-status="${id}-status" data-copied-label="Copied">Copy<span class="visually-hidden"> the ${what}</span></button>
</div>
<p class="copy-status" role="status" aria-live="polite" id="${id}-status"></p>`;
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

/** A page that does not exist, or an id of another organisation. */
export const notFoundPage = () =>
  messagePage('Page not found', 'There is no page at this address.', {
    href: PAGES.connections,
    label: 'Go to Settings',
  });

/** A form post without this session's token (or sent from another site). */
export const expiredFormPage = () =>
  messagePage(
    'This form has expired',
    'The form was not sent from this page or has expired. Go back, reload the page and try again.',
    { href: PAGES.connections, label: 'Back to Settings' },
  );

/** 403 for a user whose role does not open the page (a link typed, or a form of an older page). */
export function forbiddenPage(signed: Signed, message: string): string {
  const content = html`<p class="notice notice-info">${message}</p>`;
  return settingsLayout(signed, 'connections', 'Not allowed', content);
}
