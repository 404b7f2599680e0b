// Settings → Roles & Permissions: what each role may do, and the one permission
// (pages/roles.ts).
import type { Organization } from '../../tenancy/organizations.js';
import type { Signed } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { alert, RESENT_NOTICE, sessionFormFields, settingsLayout } from '../layout.js';
import { PAGES } from '../paths.js';

/**
 * What the saved permission now means, true for everyone it concerns: when it is off,
 * nobody generates keys (owners neither), as the service refuses them all.
 */
function savedPermission(organization: Organization): string {
  return organization.apiKeysEnabled
    ? 'Saved: owners and administrators can generate API keys.'
    : `Saved: no one can generate API keys for ${organization.name}, owners included. Keys already generated keep working until they are revoked.`;
}

/** The manager column's setting as the page shows it. */
export interface ManagerColumnView {
  /** The column named now; null: none. */
  current: string | null;
  /** The organisation's text columns and text parts (`employee/managerEmail`). */
  columns: string[];
  /** Reporting loops in the data through the current column, by cycle name. */
  loops: { cycle: string; loops: string[][] }[];
  /** What a refused post chose, shown again. */
  chosen?: string;
}

function managerColumnSection(view: ManagerColumnView, isOwner: boolean, csrf: SafeHtml): SafeHtml {
  const chosen = view.chosen ?? view.current ?? '';
  const offered =
    view.columns.includes(chosen) || chosen === '' ? view.columns : [...view.columns, chosen];
  const options = [
    html`<option value=""${chosen === '' ? html` selected` : ''}>None</option>`,
    ...offered.map(
      (column) =>
        html`<option value="${column}"${column === chosen ? html` selected` : ''}>${column}</option>`,
    ),
  ];
  const loops =
    view.loops.length === 0
      ? view.current === null
        ? ''
        : html`<p class="hint" id="reporting-loops">No reporting loop found: every reporting line ends at someone with no manager.</p>`
      : html`<div class="notice notice-info" id="reporting-loops"><p>Reporting loops found: these people report to each other in a circle, so none of them reaches the top. Keys for their reporting line read each of them once. Fix the manager emails in your data and import it again.</p>
  <ul>${view.loops.flatMap((found) =>
    found.loops.map(
      (loop) =>
        html`<li>${found.cycle}: ${loop.map((email, index) => html`${index > 0 ? ' → ' : ''}<code>${email}</code>`)} → <code>${loop[0] ?? ''}</code></li>`,
    ),
  )}</ul></div>`;
  return html`<section class="panel" aria-labelledby="manager-column-title">
  <h2 id="manager-column-title">Manager column</h2>
  <form method="post" action="${PAGES.roles}/manager-column">
    ${csrf}
    <fieldset${isOwner ? '' : html` disabled aria-describedby="manager-owner-only"`}>
      <legend class="visually-hidden">Manager column</legend>
      <div class="field">
        <label for="manager-column">Column that holds each employee's manager's email</label>
        <select id="manager-column" name="managerColumn" aria-describedby="manager-column-hint">${options}</select>
        <p class="hint" id="manager-column-hint">API keys for one manager's reporting line (“Reports to” under Connections) follow this column, at any depth. ${view.columns.length === 0 ? 'Your organisation has no text column yet: import data first.' : 'Only text columns and text parts of your data are offered.'}</p>
      </div>
      ${loops}
      ${isOwner ? html`<button type="submit" class="button button-primary">Set manager column</button>` : html`<p class="notice notice-info" id="manager-owner-only">Only an owner can change the manager column.</p>`}
    </fieldset>
  </form>
</section>`;
}

export function rolesPage(
  view: Signed & {
    saved?: string | undefined;
    resent?: boolean;
    error?: string;
    managerColumn: ManagerColumnView;
  },
): string {
  const isOwner = view.user.role === 'owner';
  const manager = view.managerColumn.current;
  const savedManager =
    manager === null
      ? 'Saved: no manager column. Keys can no longer be given a reporting line.'
      : `Saved: the manager column is ${manager}. ${view.managerColumn.loops.length === 0 ? 'No reporting loop found.' : 'Reporting loops were found: see below.'}`;
  const enabled = view.organization.apiKeysEnabled;
  return settingsLayout(
    view,
    'roles',
    'Roles & Permissions',
    html`${view.error && alert('error', view.error)}
${view.resent && alert('info', RESENT_NOTICE)}
${view.saved !== undefined && alert('success', view.saved === 'manager-column' ? savedManager : savedPermission(view.organization))}
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
  <form method="post" action="${PAGES.roles}">
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
</section>
${managerColumnSection(view.managerColumn, isOwner, sessionFormFields(view.csrfToken))}`,
  );
}
