// Settings → Users (owners only; docs/web-app.md): the organisation's users with their
// role and last sign-in; add a user, change a role, reset a password, remove a user. The
// same service as `compplan users …` (src/modules/users/service.ts), which keeps the last
// owner. A one-time password is shown once, after the POST that made it
// (POST/redirect/GET, sealed in the session's one-time view meanwhile); no e-mail is sent.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keepForOneView, takeOneView } from '../../sessions/one-time-view.js';
import { ROLES, type Role, type User } from '../../users/repository.js';
import {
  changeUserRole,
  createUser,
  listOrganizationUsers,
  removeUser,
  resetUserPassword,
  UserManagementError,
} from '../../users/service.js';
import { html, type SafeHtml } from '../html.js';
import { formField, originOf, redirect, sendPage } from '../http.js';
import {
  alert,
  confirmPage,
  RESENT_NOTICE,
  ROLE_NAMES,
  type Signed,
  sessionFormFields,
  settingsLayout,
  shownOncePanel,
  time,
} from '../views.js';
import { forbidden, type PageContext, routeOf } from './context.js';

export const USERS_PAGE = '/app/settings/users';
const OWNERS_ONLY = 'Only an owner can manage users.';
// The new one-time password would be shown to a session that the reset ends.
const OWN_PASSWORD = 'You cannot reset your own password here: ask another owner to reset it.';

/** What the page shows once after the post that added a user or reset a password. */
interface OneTimePasswordView {
  kind: 'one-time-password';
  email: string;
  password: string;
  reset: boolean;
}

interface UsersView extends Signed {
  users: User[];
  signInUrl: string;
  shown?: OneTimePasswordView | undefined;
  done?: string | undefined;
  resent?: boolean;
  error?: string | undefined;
  email?: string | undefined;
}

const roleOf = (request: FastifyRequest): Role | undefined =>
  ROLES.find((role) => role === formField(request, 'role'));

export function registerUserPages(app: FastifyInstance, context: PageContext): void {
  const { signedIn, signedInPost, view } = context;
  // Owners only, on every route: the page, its confirmations and its posts.
  const owner = async (request: FastifyRequest, reply: FastifyReply) => {
    const signed = view(request);
    if (signed.user.role === 'owner') return signed;
    request.log.warn({ userId: signed.user.id }, 'user management refused: not an owner');
    forbidden(reply, signed, OWNERS_ONLY);
    return undefined;
  };

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: Partial<UsersView> = {},
  ) {
    const base = view(request);
    const users = await listOrganizationUsers(app.db, base.organization.slug);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const done = typeof query.done === 'string' ? DONE[query.done] : undefined;
    const signInUrl = `${originOf(request)}/app/sign-in`;
    const resent = query[context.resentFlag] !== undefined;
    return sendPage(
      reply,
      status,
      usersPage({ ...base, users, signInUrl, done, resent, ...extra }),
    );
  }

  /** Shows a one-time password once: kept for the next view of the page, which it redirects to. */
  async function showOneTimePassword(
    request: FastifyRequest,
    reply: FastifyReply,
    shown: Omit<OneTimePasswordView, 'kind'>,
  ) {
    await keepForOneView(app.db, context.sessionIdOf(request), {
      kind: 'one-time-password',
      ...shown,
    } satisfies OneTimePasswordView);
    return redirect(reply, USERS_PAGE);
  }

  /** The user of the path, if of the signed-in organisation. */
  async function target(request: FastifyRequest) {
    const { id } = request.params as { id: string };
    const users = await listOrganizationUsers(app.db, view(request).organization.slug);
    return users.find((user) => user.id === id);
  }

  /** A change refused by the service (the last owner), shown on the page; 422. */
  async function attempt(
    request: FastifyRequest,
    reply: FastifyReply,
    work: () => Promise<FastifyReply>,
  ) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof UserManagementError)) throw error;
      return render(request, reply, 422, { error: error.message });
    }
  }

  app.get(routeOf(USERS_PAGE), signedIn, async (request, reply) => {
    if (!(await owner(request, reply))) return reply;
    const shown = await takeOneView<OneTimePasswordView>(app.db, context.sessionIdOf(request));
    return render(request, reply, 200, shown?.kind === 'one-time-password' ? { shown } : {});
  });

  app.post(routeOf(USERS_PAGE), signedInPost, async (request, reply) => {
    const signed = await owner(request, reply);
    if (!signed) return reply;
    const email = formField(request, 'email');
    const role = roleOf(request);
    if (!role) return render(request, reply, 422, { error: 'Choose a role.', email });
    try {
      const created = await createUser(
        app.db,
        { org: signed.organization.slug, email, role },
        context.actorOf(request),
        context.passwordHashing,
      );
      request.log.info({ newUserId: created.id, userId: signed.user.id }, 'user added');
      return showOneTimePassword(request, reply, {
        email: created.email,
        password: created.oneTimePassword,
        reset: false,
      });
    } catch (error) {
      if (!(error instanceof UserManagementError)) throw error;
      return render(request, reply, 422, { error: error.message, email });
    }
  });

  app.post(`${routeOf(USERS_PAGE)}/:id/role`, signedInPost, async (request, reply) => {
    const signed = await owner(request, reply);
    if (!signed) return reply;
    const user = await target(request);
    const role = roleOf(request);
    if (!user) return context.notFound(reply);
    if (!role) return render(request, reply, 422, { error: 'Choose a role.' });
    return attempt(request, reply, async () => {
      await changeUserRole(
        app.db,
        signed.organization.slug,
        { id: user.id },
        role,
        context.actorOf(request),
      );
      request.log.info({ targetUserId: user.id, userId: signed.user.id, role }, 'role changed');
      return redirect(reply, `${USERS_PAGE}?done=role`);
    });
  });

  for (const action of ['remove', 'reset'] as const) {
    app.get(`${routeOf(USERS_PAGE)}/:id/${action}`, signedIn, async (request, reply) => {
      const signed = await owner(request, reply);
      if (!signed) return reply;
      const user = await target(request);
      if (!user) return context.notFound(reply);
      return sendPage(reply, 200, confirmUserPage(signed, user, action));
    });
  }

  app.post(`${routeOf(USERS_PAGE)}/:id/remove`, signedInPost, async (request, reply) => {
    const signed = await owner(request, reply);
    if (!signed) return reply;
    const user = await target(request);
    if (!user) return context.notFound(reply);
    return attempt(request, reply, async () => {
      await removeUser(app.db, signed.organization.slug, { id: user.id }, context.actorOf(request));
      request.log.info({ targetUserId: user.id, userId: signed.user.id }, 'user removed');
      // Whoever removed themselves has no session left: the next page is sign-in.
      return redirect(reply, `${USERS_PAGE}?done=removed`);
    });
  });

  app.post(`${routeOf(USERS_PAGE)}/:id/reset`, signedInPost, async (request, reply) => {
    const signed = await owner(request, reply);
    if (!signed) return reply;
    const user = await target(request);
    if (!user) return context.notFound(reply);
    if (user.id === signed.user.id) {
      return render(request, reply, 422, { error: OWN_PASSWORD });
    }
    const reset = await resetUserPassword(
      app.db,
      signed.organization.slug,
      { id: user.id },
      context.actorOf(request),
      context.passwordHashing,
    );
    request.log.info({ targetUserId: user.id, userId: signed.user.id }, 'password reset');
    return showOneTimePassword(request, reply, {
      email: user.email,
      password: reset.oneTimePassword,
      reset: true,
    });
  });
}

const DONE: Record<string, string> = {
  role: 'Role changed.',
  removed: 'User removed. Their sessions have ended.',
};

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

function usersPage(view: UsersView): string {
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
  <div class="table-wrap"><table class="user-list stacked">
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Last sign-in</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
${rows}
  </tbody>
</table></div>
</section>`,
  );
}

function confirmUserPage(signed: Signed, user: User, action: 'remove' | 'reset'): string {
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
