// Settings → Users: the list with each user's role form, the add form, a one-time password
// shown once, and the remove and reset confirmations (pages/users.ts).
import { ROLES, type Role, type User } from '../../users/repository.js';
import type { Signed } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import {
  alert,
  confirmPage,
  listTable,
  RESENT_NOTICE,
  ROLE_NAMES,
  sessionFormFields,
  settingsLayout,
  shownOncePanel,
  time,
} from '../layout.js';
import { PAGES } from '../paths.js';

const USERS_PAGE = PAGES.users;

/** What the page shows once after the post that added a user or reset a password. */
export interface OneTimePasswordView {
  kind: 'one-time-password';
  email: string;
  password: string;
  reset: boolean;
}

/** What the page says once after a role was changed or a user removed: whom and what. */
export interface DoneView {
  kind: 'done';
  message: string;
}

export const roleChanged = (email: string, role: Role) =>
  `Role of ${email} changed to ${ROLE_NAMES[role]}.`;
export const userRemoved = (email: string) => `${email} removed. Their sessions have ended.`;

export interface UsersView extends Signed {
  users: User[];
  signInUrl: string;
  shown?: OneTimePasswordView | undefined;
  done?: string | undefined;
  resent?: boolean;
  error?: string | undefined;
  email?: string | undefined;
}

function oneTimePasswordPanel(shown: OneTimePasswordView, signInUrl: string): SafeHtml {
  return shownOncePanel({
    ids: { title: 'one-time-title', warning: 'one-time-warning', secret: 'one-time-password' },
    title: shown.reset
      ? html`New one-time password for ${shown.email}`
      : html`One-time password for ${shown.email}`,
    warning: html`<strong>Copy it now: it is shown only this once.</strong> No e-mail is sent; give it to ${shown.email} yourself.`,
    label: 'One-time password',
    secret: shown.password,
    after: html`<p class="hint">They sign in at <a href="${signInUrl}">${signInUrl}</a> with it, and then choose their own password.${shown.reset ? ' Their sessions have ended.' : ''}</p>`,
  });
}

function roleForm(view: UsersView, user: User): SafeHtml {
  const id = `role-${user.id}`;
  return html`<form method="post" action="${USERS_PAGE}/${user.id}/role" class="role-form">
    ${sessionFormFields(view.csrfToken)}
    <label for="${id}" class="visually-hidden">Role of ${user.email}</label>
    <select id="${id}" name="role">${ROLES.map(
      (role) =>
        html`<option value="${role}"${role === user.role ? html` selected` : ''}>${ROLE_NAMES[role]}</option>`,
    )}</select>
    <button type="submit" class="button button-quiet button-small">Change<span class="visually-hidden"> the role of ${user.email}</span></button>
  </form>`;
}

export function usersPage(view: UsersView): string {
  const rows = view.users.map(
    (user) => html`<tr>
  <th scope="row">${user.email}${user.id === view.user.id ? html` <span class="sub">You</span>` : ''}</th>
  <td data-label="Role">${roleForm(view, user)}</td>
  <td data-label="Last sign-in"><div>${time(user.lastSignedInAt)}${user.mustChangePassword ? html` <span class="sub">One-time password not yet replaced</span>` : ''}</div></td>
  <td class="actions">${user.id === view.user.id ? '' : html`<a class="button button-quiet button-small" href="${USERS_PAGE}/${user.id}/reset">Reset password<span class="visually-hidden"> of ${user.email}</span></a> `}<a class="button button-danger-quiet button-small" href="${USERS_PAGE}/${user.id}/remove">Remove<span class="visually-hidden"> ${user.email}</span></a></td>
</tr>`,
  );
  return settingsLayout(
    view,
    'users',
    'Users',
    html`<p class="lead">The people who sign in to compplan for ${view.organization.name}. Owners manage users and permissions; administrators, API keys, webhooks and data.</p>
${view.error && alert('error', view.error)}
${view.resent && alert('info', RESENT_NOTICE)}
${view.done && alert('success', view.done)}
${view.shown && oneTimePasswordPanel(view.shown, view.signInUrl)}
<section class="panel" aria-labelledby="add-user-title">
  <h2 id="add-user-title">Add a user</h2>
  <form method="post" action="${USERS_PAGE}" class="inline-form">
    ${sessionFormFields(view.csrfToken)}
    <div class="field">
      <label for="user-email">Email</label>
      <input id="user-email" name="email" type="email" required autocomplete="off" value="${view.email ?? ''}" aria-describedby="user-email-hint">
      <p class="hint" id="user-email-hint">They sign in with it. No e-mail is sent: you give them their one-time password.</p>
    </div>
    <div class="field">
      <label for="user-role">Role</label>
      <select id="user-role" name="role">
        <option value="admin" selected>${ROLE_NAMES.admin}</option>
        <option value="owner">${ROLE_NAMES.owner}</option>
      </select>
    </div>
    <button type="submit" class="button button-primary">Add user</button>
  </form>
</section>
<section class="panel" aria-labelledby="users-title">
  <h2 id="users-title">Users</h2>
  ${listTable({
    className: 'user-list',
    columns: ['Email', 'Role', 'Last sign-in', { label: 'Actions', hidden: true }],
    rows,
  })}
</section>`,
  );
}

export function confirmUserPage(signed: Signed, user: User, action: 'remove' | 'reset'): string {
  const facts: [string, SafeHtml][] = [
    ['Role', html`${ROLE_NAMES[user.role]}`],
    ['Last sign-in', time(user.lastSignedInAt)],
  ];
  const self = user.id === signed.user.id;
  return confirmPage(signed, {
    current: 'users',
    ...(action === 'remove'
      ? {
          title: 'Remove user',
          headingId: 'remove-user-title',
          question: html`Remove ${user.email}?`,
          consequence: self
            ? 'You can no longer sign in, and this session ends at once.'
            : 'They can no longer sign in, and their sessions end at once. Removing cannot be undone; add them again to give them access.',
          button: 'Remove user',
        }
      : {
          title: 'Reset password',
          headingId: 'reset-user-title',
          question: html`Give ${user.email} a new one-time password?`,
          consequence:
            'Their password stops working and their sessions end at once. The new one-time password is shown to you once, to give them.',
          button: 'Reset password',
        }),
    facts,
    action: `${USERS_PAGE}/${user.id}/${action}`,
    cancel: USERS_PAGE,
  });
}
