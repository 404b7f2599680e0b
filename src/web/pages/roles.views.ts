// Settings → Roles & Permissions: what each role may do, and the one permission
// (pages/roles.ts).
import type { Organization } from '../../tenancy/organizations.js';
import type { Signed } from '../context.js';
import { html } from '../html.js';
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
</section>`,
  );
}
