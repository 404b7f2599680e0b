// Settings → Roles & Permissions: owners turn "Allow administrators to generate API keys"
// on and off — the same setting `compplan orgs set SLUG --api-keys enabled|disabled` changes;
// administrators see it read-only, and their post gets 403. Owners also name the
// organisation's manager column (`compplan orgs set SLUG --manager-column KEY`), which keys
// for a reporting line read (docs/api-keys.md, "Slices"), and see the reporting loops found.
import type { FastifyRequest } from 'fastify';
import { changeApiKeysSetting } from '../../api-keys/organization-setting.js';
import { columnChoicesOf, KeyManagementError } from '../../api-keys/service.js';
import { textColumnsOf } from '../../row-slices/columns.js';
import { reportingLoops } from '../../row-slices/manager-column.js';
import { setManagerColumn } from '../../row-slices/manager-setting.js';
import { findOrganizationById } from '../../tenancy/organizations.js';
import type { Page } from '../context.js';
import { formField, redirect, sendPage } from '../http.js';
import { PAGES, RESENT, routeOf } from '../paths.js';
import { type ManagerColumnView, rolesPage } from './roles.views.js';

const MANAGER_COLUMN = `${routeOf(PAGES.roles)}/manager-column`;

export const rolesPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;

  /** The manager column's choices, and the reporting loops its data has now, by cycle. */
  async function managerColumnView(request: FastifyRequest): Promise<ManagerColumnView> {
    const { organization } = view(request);
    const current = (await findOrganizationById(app.db, organization.id)) ?? organization;
    const columns = textColumnsOf(
      (await columnChoicesOf(app.db, organization.slug)).flatMap((group) => group.columns),
    ).sort();
    const loops: ManagerColumnView['loops'] = [];
    if (current.managerColumn !== null) {
      const cycles = await app.db
        .selectFrom('merit_cycles')
        .select(['id', 'name'])
        .where('organization_id', '=', organization.id)
        .orderBy('name')
        .execute();
      for (const cycle of cycles) {
        const found = await reportingLoops(app.db, cycle.id);
        if (found.length > 0) loops.push({ cycle: cycle.name, loops: found });
      }
    }
    return { current: current.managerColumn, columns, loops };
  }

  app.get<{ Querystring: { saved?: string; [RESENT]?: string } }>(
    routeOf(PAGES.roles),
    signedIn,
    async (request, reply) =>
      sendPage(
        reply,
        200,
        rolesPage({
          ...view(request),
          saved: request.query.saved,
          resent: request.query[RESENT] !== undefined,
          managerColumn: await managerColumnView(request),
        }),
      ),
  );

  const refuseNonOwner = async (request: FastifyRequest, what: string) => {
    const base = view(request);
    request.log.warn({ userId: base.user.id }, `${what} refused: not an owner`);
    return rolesPage({
      ...base,
      error: 'Only an owner can change permissions.',
      managerColumn: await managerColumnView(request),
    });
  };

  app.post(routeOf(PAGES.roles), signedInPost, async (request, reply) => {
    const base = view(request);
    if (base.user.role !== 'owner') {
      return sendPage(reply, 403, await refuseNonOwner(request, 'permission change'));
    }
    const allow = formField(request, 'allowAdministratorsToGenerateApiKeys') === 'on';
    // The same setting `compplan orgs set SLUG --api-keys enabled|disabled` changes.
    await changeApiKeysSetting(app.db, base.organization.id, allow, context.actorOf(request));
    request.log.info({ userId: base.user.id, apiKeysEnabled: allow }, 'permission changed');
    return redirect(reply, `${PAGES.roles}?saved`);
  });

  app.post(MANAGER_COLUMN, signedInPost, async (request, reply) => {
    const base = view(request);
    if (base.user.role !== 'owner') {
      return sendPage(reply, 403, await refuseNonOwner(request, 'manager column change'));
    }
    const chosen = formField(request, 'managerColumn').trim();
    try {
      // The same change as `compplan orgs set SLUG --manager-column KEY`, audited.
      await setManagerColumn(app.database, base.organization.slug, chosen === '' ? null : chosen, {
        actor: context.actorOf(request),
      });
    } catch (error) {
      if (!(error instanceof KeyManagementError)) throw error;
      const message = error.message
        .replace(/--manager-column/g, 'Manager column')
        .replace(/ \(or none to clear it\)/, '');
      return sendPage(
        reply,
        422,
        rolesPage({
          ...base,
          error: message,
          managerColumn: { ...(await managerColumnView(request)), chosen },
        }),
      );
    }
    request.log.info({ userId: base.user.id, managerColumn: chosen }, 'manager column changed');
    return redirect(reply, `${PAGES.roles}?saved=manager-column`);
  });
};
