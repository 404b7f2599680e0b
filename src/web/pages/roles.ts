// Settings → Roles & Permissions: owners turn "Allow administrators to generate API keys"
// on and off — the same setting `compplan orgs set SLUG --api-keys enabled|disabled` changes;
// administrators see it read-only, and their post gets 403.
import { changeApiKeysSetting } from '../../api-keys/organization-setting.js';
import type { Page } from '../context.js';
import { formField, redirect, sendPage } from '../http.js';
import { PAGES, RESENT, routeOf } from '../paths.js';
import { rolesPage } from './roles.views.js';

export const rolesPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;
  app.get<{ Querystring: { saved?: string; [RESENT]?: string } }>(
    routeOf(PAGES.roles),
    signedIn,
    async (request, reply) =>
      sendPage(
        reply,
        200,
        rolesPage({
          ...view(request),
          saved: request.query.saved !== undefined,
          resent: request.query[RESENT] !== undefined,
        }),
      ),
  );

  app.post(routeOf(PAGES.roles), signedInPost, async (request, reply) => {
    const base = view(request);
    if (base.user.role !== 'owner') {
      request.log.warn({ userId: base.user.id }, 'permission change refused: not an owner');
      return sendPage(
        reply,
        403,
        rolesPage({ ...base, error: 'Only an owner can change permissions.' }),
      );
    }
    const allow = formField(request, 'allowAdministratorsToGenerateApiKeys') === 'on';
    // The same setting `compplan orgs set SLUG --api-keys enabled|disabled` changes.
    await changeApiKeysSetting(app.db, base.organization.id, allow, context.actorOf(request));
    request.log.info({ userId: base.user.id, apiKeysEnabled: allow }, 'permission changed');
    return redirect(reply, `${PAGES.roles}?saved`);
  });
};
