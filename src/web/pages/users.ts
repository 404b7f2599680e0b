// Settings → Users (owners only; docs/web-app.md): the organisation's users with their
// role and last sign-in; add a user, change a role, reset a password, remove a user. The
// same service as `compplan users …` (src/users/service.ts), which keeps the last
// owner. A one-time password is shown once, after the POST that made it
// (POST/redirect/GET, sealed in the session's one-time view meanwhile); no e-mail is sent.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keepForOneView, takeOneView } from '../../sessions/one-time-view.js';
import { ROLES, type Role } from '../../users/repository.js';
import {
  changeUserRole,
  createUser,
  listOrganizationUsers,
  removeUser,
  resetUserPassword,
  UserManagementError,
} from '../../users/service.js';
import type { Page } from '../context.js';
import { formField, originOf, redirect, sendPage } from '../http.js';
import { forbiddenPage } from '../layout.js';
import { PAGES, RESENT, routeOf } from '../paths.js';
import {
  confirmUserPage,
  type DoneView,
  type OneTimePasswordView,
  roleChanged,
  type UsersView,
  userRemoved,
  usersPage,
} from './users.views.js';

const USERS_PAGE = PAGES.users;

const OWNERS_ONLY = 'Only an owner can manage users.';
// The new one-time password would be shown to a session that the reset ends.
const OWN_PASSWORD = 'You cannot reset your own password here: ask another owner to reset it.';

const roleOf = (request: FastifyRequest): Role | undefined =>
  ROLES.find((role) => role === formField(request, 'role'));

export const usersPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;
  // Owners only, on every route: the page, its confirmations and its posts.
  const owner = async (request: FastifyRequest, reply: FastifyReply) => {
    const signed = view(request);
    if (signed.user.role === 'owner') return signed;
    request.log.warn({ userId: signed.user.id }, 'user management refused: not an owner');
    sendPage(reply, 403, forbiddenPage(signed, OWNERS_ONLY));
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
    const signInUrl = `${originOf(request)}/app/sign-in`;
    const resent = query[RESENT] !== undefined;
    return sendPage(reply, status, usersPage({ ...base, users, signInUrl, resent, ...extra }));
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

  /** Says once, on the page the post redirects to, whom the change was of and what it was. */
  async function showDone(request: FastifyRequest, reply: FastifyReply, message: string) {
    const done: DoneView = { kind: 'done', message };
    await keepForOneView(app.db, context.sessionIdOf(request), done);
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
    const shown = await takeOneView<OneTimePasswordView | DoneView>(
      app.db,
      context.sessionIdOf(request),
    );
    return render(
      request,
      reply,
      200,
      shown?.kind === 'one-time-password'
        ? { shown }
        : shown?.kind === 'done'
          ? { done: shown.message }
          : {},
    );
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
        context.settings.passwordHashing,
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
      return showDone(request, reply, roleChanged(user.email, role));
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
      return showDone(request, reply, userRemoved(user.email));
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
      context.settings.passwordHashing,
    );
    request.log.info({ targetUserId: user.id, userId: signed.user.id }, 'password reset');
    return showOneTimePassword(request, reply, {
      email: user.email,
      password: reset.oneTimePassword,
      reset: true,
    });
  });
};
