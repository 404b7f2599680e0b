// Settings → Audit log: the filter form, the entries newest first, and the link to older
// ones. On a phone each entry is a block with its values under their column names, as
// the key list is (the `stacked` styles).

import type { ColumnChoice } from '../../api-keys/columns.js';
import type { ApiKey } from '../../api-keys/repository.js';
import type { AuditAction, AuditEntry } from '../../audit/entry.js';
import { AUDIT_ACTIONS, REQUEST_ACTION } from '../../audit/entry.js';
import type { AuditUser } from '../../audit/service.js';
import type { Signed } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { alert, listTable, settingsLayout, time } from '../layout.js';
import { PAGES } from '../paths.js';

const AUDIT_PAGE = PAGES.auditLog;

export const ACTION_LABELS: Record<AuditAction, string> = {
  [REQUEST_ACTION]: 'API request',
  'key.created': 'Key created',
  'key.revoked': 'Key revoked',
  'key.rolled': 'Key rolled',
  'settings.changed': 'Settings changed',
  'user.created': 'User created',
  'user.role-changed': 'User role changed',
  'user.password-reset': 'Password reset',
  'user.removed': 'User removed',
  'user.signed-in': 'Signed in',
  'user.sign-in-failed': 'Sign-in failed',
  'user.sign-in-throttled': 'Sign-in throttled',
  'webhook.added': 'Webhook added',
  'webhook.removed': 'Webhook removed',
  import: 'Data imported',
  'cycle.removed': 'Merit cycle removed',
};

/** The filters as the form sends them (text; empty: not filtered). */
export interface AuditQuery {
  key: string;
  user: string;
  action: string;
  from: string;
  to: string;
  /** A column key: the requests whose answer carried it. */
  column: string;
}

export interface AuditView extends Signed {
  query: AuditQuery;
  keys: ApiKey[];
  users: readonly AuditUser[];
  /** The organisation's columns (every cycle's column schema), for the Column filter. */
  columns: readonly ColumnChoice[];
  entries: AuditEntry[];
  /** The descriptions of the slices the entries' requests were read through, by id. */
  slices?: ReadonlyMap<string, string>;
  /** The query string of the next (older) page; undefined on the last page. */
  older?: string | undefined;
  /** Whether this is a later page (a link back to the newest entries). */
  later: boolean;
  error?: string | undefined;
}

const selected = (value: string, current: string) => (value === current ? html` selected` : '');

function filterForm(view: AuditView): SafeHtml {
  const { query } = view;
  // Revoked keys and removed users stay: their entries are still in the log.
  const keyOptions = view.keys.map(
    (key) =>
      html`<option value="${key.id}"${selected(key.id, query.key)}>${key.name} (${key.prefix}…)${key.revokedAt === null ? '' : ' (revoked)'}</option>`,
  );
  const userOptions = view.users.map(
    (user) =>
      html`<option value="${user.id}"${selected(user.id, query.user)}>${user.email}${user.removed ? ' (removed)' : ''}</option>`,
  );
  const actionOptions = AUDIT_ACTIONS.map(
    (action) =>
      html`<option value="${action}"${selected(action, query.action)}>${ACTION_LABELS[action]}</option>`,
  );
  return html`<form method="get" action="${AUDIT_PAGE}" class="audit-filters" aria-label="Filter the audit log">
  <div class="field"><label for="audit-key">API key</label><select id="audit-key" name="key"><option value="">Any key</option>${keyOptions}</select></div>
  <div class="field"><label for="audit-user">User</label><select id="audit-user" name="user"><option value="">Anyone</option>${userOptions}</select></div>
  <div class="field"><label for="audit-action">Action</label><select id="audit-action" name="action"><option value="">Any action</option>${actionOptions}</select></div>
  <div class="field"><label for="audit-column">Column served</label><select id="audit-column" name="column"><option value="">Any column</option>${columnOptions(view)}</select></div>
  <div class="field"><label for="audit-from">From (UTC)</label><input id="audit-from" name="from" type="date" value="${query.from}"></div>
  <div class="field"><label for="audit-to">To (UTC)</label><input id="audit-to" name="to" type="date" value="${query.to}"></div>
  <div class="button-row"><button type="submit" class="button button-primary">Filter</button> <a class="button button-quiet" href="${AUDIT_PAGE}">Clear</a></div>
</form>`;
}

/**
 * The Column filter's options: each column key of the organisation once, by its name; a key
 * asked for that no cycle has now (its cycle removed, a link kept) is offered as it is, so
 * the filter shows what it filters by.
 */
function columnOptions(view: AuditView): SafeHtml[] {
  const names = new Map<string, string>();
  for (const column of view.columns) if (!names.has(column.key)) names.set(column.key, column.name);
  const chosen = view.query.column;
  if (chosen !== '' && !names.has(chosen)) names.set(chosen, chosen);
  return [...names].map(
    ([key, name]) =>
      html`<option value="${key}"${selected(key, chosen)}>${name === key ? key : `${name} (${key})`}</option>`,
  );
}

/**
 * An API path that may break after its slashes (`<wbr>`), and the Details column wide
 * enough on a desktop (app.css) for a piece such as a cycle id: `compensationPlanning` is
 * never split.
 */
function breakablePath(path: string): SafeHtml[] {
  return path.split('/').map((part, index) => html`${index > 0 ? html`/<wbr>` : ''}${part}`);
}

function who(entry: AuditEntry, keyNames: ReadonlyMap<string, ApiKey>): SafeHtml {
  if (entry.action === REQUEST_ACTION && entry.keyId !== null) {
    const key = keyNames.get(entry.keyId);
    return key ? html`${key.name} <code>${key.prefix}…</code>` : html`<code>${entry.keyId}</code>`;
  }
  if (entry.actor === 'cli') return html`<span class="muted">Command line</span>`;
  return html`${entry.actor ?? ''}`;
}

/** A detail's value in words: `{"created":1,"updated":0}` as "1 created, 0 updated". */
function detailText(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  if (value !== null && typeof value === 'object') {
    return Object.entries(value)
      .map(([name, count]) => `${String(count)} ${name}`)
      .join(', ');
  }
  return String(value);
}

function what(
  entry: AuditEntry,
  keyNames: ReadonlyMap<string, ApiKey>,
  slices: ReadonlyMap<string, string>,
): SafeHtml {
  if (entry.action === REQUEST_ACTION) {
    const failed = (entry.status ?? 0) >= 400;
    const served = entry.columnsServed ?? [];
    // The slice the request was read through: only those employees were served.
    const slice =
      entry.rowSliceId === null
        ? ''
        : html`<span class="audit-detail">Rows: only where <code>${slices.get(entry.rowSliceId) ?? entry.rowSliceId}</code></span>`;
    return html`<code class="audit-path">${entry.method} ${breakablePath(entry.path ?? '')}</code> <span class="badge ${failed ? 'badge-revoked' : 'badge-active'}">${entry.status}</span>${entry.employees ? html` <span class="muted">${entry.employees} employees</span>` : ''}${served.length > 0 ? html`<span class="audit-detail">Columns served: ${served.map((key, index) => html`${index > 0 ? ', ' : ''}<code>${key}</code>`)}</span>` : ''}${slice}`;
  }
  // A key by its name, as the rest of the page shows keys.
  const key = entry.keyId === null ? undefined : keyNames.get(entry.keyId);
  const target = key
    ? html`${key.name} <code>${key.prefix}…</code>`
    : entry.target
      ? html`<code>${entry.target}</code>`
      : '';
  const details = Object.entries(entry.details ?? {}).map(
    ([name, value]) => html`<span class="audit-detail">${name}: ${detailText(value)}</span>`,
  );
  return html`${target}${details}`;
}

export function auditPage(view: AuditView): string {
  const keyNames = new Map(view.keys.map((key) => [key.id, key]));
  const rows = view.entries.map(
    (entry) => html`<tr>
  <th scope="row">${time(entry.at)}</th>
  <td data-label="Action"><span class="value">${ACTION_LABELS[entry.action] ?? entry.action}</span></td>
  <td data-label="By"><span class="value">${who(entry, keyNames)}</span></td>
  <td data-label="Details"><span class="value audit-details">${what(entry, keyNames, view.slices ?? new Map())}</span></td>
  <td data-label="From"><span class="value">${entry.clientAddress ? html`<code>${entry.clientAddress}</code>` : html`<span class="muted">—</span>`}</span></td>
</tr>`,
  );
  const pages = html`<nav class="button-row audit-pages" aria-label="Pages">
  ${view.later ? html`<a class="button button-quiet" href="${AUDIT_PAGE}">Newest entries</a>` : ''}
  ${view.older ? html`<a class="button button-quiet" href="${AUDIT_PAGE}?${view.older}" rel="next">Older entries</a>` : ''}
</nav>`;
  return settingsLayout(
    view,
    'audit',
    'Audit log',
    html`<p class="lead">Every request made with an API key of ${view.organization.name}, whatever its answer, and every change to its keys, users, settings, webhooks and data: who, when and from where. Newest first.</p>
${view.error && alert('error', view.error)}
<section class="panel" aria-labelledby="audit-filter-title">
  <h2 id="audit-filter-title" class="visually-hidden">Filter</h2>
  ${filterForm(view)}
</section>
<section class="panel" aria-labelledby="audit-entries-title">
  <h2 id="audit-entries-title">Entries</h2>
  ${
    view.entries.length === 0
      ? emptyNote(view)
      : listTable({
          className: 'audit-list',
          columns: ['Time', 'Action', 'By', 'Details', 'From'],
          rows,
        })
  }
  ${pages}
</section>`,
  );
}

/** Why no entry is listed; nothing when the page was refused (its alert says why). */
function emptyNote(view: AuditView): SafeHtml | string {
  if (view.error) return '';
  const filtered = Object.values(view.query).some((value) => value !== '');
  return html`<p class="muted">${filtered ? 'No entries match these filters.' : 'No entries yet.'}</p>`;
}
