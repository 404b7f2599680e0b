// Settings → Connections: generate an API key (what it may read, until when, from where),
// the key list, revoke (after a confirmation) and roll (with a grace period). Keys change
// through the same service as `compplan keys …`, so the page and the command line cannot
// disagree.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findApiKey } from '../../api-keys/repository.js';
import {
  createApiKey,
  KeyManagementError,
  listOrganizationApiKeys,
  revokeApiKeyById,
  rollApiKeyById,
} from '../../api-keys/service.js';
import { checkSlice } from '../../row-slices/checks.js';
import { describeSlice, sliceDefinitionOf } from '../../row-slices/definition.js';
import { countSliceMembers } from '../../row-slices/membership.js';
import { countSliceEmployees } from '../../row-slices/repository.js';
import { keepForOneView, takeOneView } from '../../sessions/one-time-view.js';
import { findOrganizationById } from '../../tenancy/organizations.js';
import type { Page } from '../context.js';
import { formField, originOf, redirect, sendPage } from '../http.js';
import { PAGES, RESENT, routeOf } from '../paths.js';
import {
  EMPTY_KEY_FORM,
  formMessage,
  type KeyForm,
  keyChoices,
  keyFormOf,
  keyInputOf,
  type NewKeyReads,
  type SliceCount,
  sliceCountWords,
} from './connections.restrictions.js';
import { connectionsPage, type NewKeyView, revokePage, rollPage } from './connections.views.js';

const CONNECTIONS = routeOf(PAGES.connections);

/** What a key reads, until when and from where: what the new-key box repeats. */
const readsOf = (key: NewKeyReads): NewKeyReads => ({
  cycles: key.cycles,
  hiddenColumns: key.hiddenColumns,
  hiddenColumnTypes: key.hiddenColumnTypes,
  expiresAt: key.expiresAt,
  allowedAddresses: key.allowedAddresses,
  rowSlice: key.rowSlice
    ? { description: key.rowSlice.description, employees: key.rowSlice.employees }
    : null,
});

export const connectionsPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;

  // --- Settings → Connections ----------------------------------------------------------
  async function renderConnections(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { created?: NewKeyView; error?: string; form?: KeyForm; count?: SliceCount } = {},
  ) {
    const base = view(request);
    // Last-used times are batched in memory; write them first so the list is current.
    await app.apiKeys.flushLastUsed();
    const keys = await listOrganizationApiKeys(app.db, base.organization.slug);
    const choices = await keyChoices(app.db, base.organization);
    const query = (request.query ?? {}) as { revoked?: unknown; [RESENT]?: unknown };
    const revoked = keys.find((key) => key.id === query.revoked && key.revokedAt !== null);
    const resent = query[RESENT] !== undefined;
    const apiBase = originOf(request);
    return sendPage(
      reply,
      status,
      connectionsPage({ ...base, ...extra, keys, revoked, resent, apiBase, choices }),
    );
  }

  /**
   * How many employees the form's slice would read today, in the cycles it chose, checked
   * as generating the key checks it (the same messages); undefined when it has no slice.
   */
  async function countOf(request: FastifyRequest, form: KeyForm): Promise<SliceCount | undefined> {
    const { organization } = view(request);
    try {
      const input = keyInputOf(form);
      const definition = sliceDefinitionOf(input);
      if (definition === null) return undefined;
      const current = (await findOrganizationById(app.db, organization.id)) ?? organization;
      // Only the organisation's own cycles: an id of another is counted as none.
      const cycles = input.cycles ?? null;
      await checkSlice(app.db, current, definition, cycles);
      const employees = await countSliceMembers(app.database, organization.id, definition, cycles);
      return { employees, description: describeSlice(definition) };
    } catch (error) {
      if (!(error instanceof KeyManagementError)) throw error;
      return { problem: formMessage(error.message) };
    }
  }

  // "Count employees": the form again, every choice kept, with what its slice reads today
  // (the page's script asks slice-count below as the person types; this works without it).
  app.post(`${CONNECTIONS}/keys/count`, signedInPost, async (request, reply) => {
    const form = keyFormOf(request);
    const count = (await countOf(request, form)) ?? {
      problem: 'No slice chosen: the key reads every employee of the merit cycles it reads.',
    };
    return renderConnections(request, reply, 200, { form, count });
  });

  // The same count as JSON for the page's script: {text, employees?, problem?}. A GET that
  // changes nothing, for the signed-in person's own organisation only.
  app.get(`${CONNECTIONS}/slice-count`, signedIn, async (request, reply) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : '');
    const cycles = text('cycles')
      .split(',')
      .filter((id) => id.length > 0);
    const form: KeyForm = {
      ...EMPTY_KEY_FORM,
      scope: cycles.length > 0 ? 'some' : 'all',
      cycles,
      rows: text('rows'),
      reportsTo: text('reportsTo'),
    };
    const count = await countOf(request, form);
    void reply.header('cache-control', 'no-store');
    if (count === undefined) return { text: '' };
    return 'problem' in count
      ? { text: count.problem, problem: true }
      : { text: sliceCountWords(count), employees: count.employees };
  });

  app.get(CONNECTIONS, signedIn, async (request, reply) => {
    // The secret of a key generated by the post that redirected here: this one time only.
    const created = await takeOneView<NewKeyView>(app.db, context.sessionIdOf(request));
    return renderConnections(request, reply, 200, created ? { created } : {});
  });

  app.post(`${CONNECTIONS}/keys`, signedInPost, async (request, reply) => {
    const { organization, user } = view(request);
    // Every choice as sent: a refusal shows the form again with all of them, so that
    // fixing one field never makes a key wider than the form showed.
    const form = keyFormOf(request);
    try {
      // The service refuses when the organisation does not allow generating keys: the
      // same rule for this page, a direct post and `compplan keys create`.
      const created = await createApiKey(
        app.database,
        { org: organization.slug, ...keyInputOf(form) },
        Date.now(),
        context.actorOf(request),
      );
      request.log.info({ keyId: created.id, userId: user.id }, 'API key generated');
      // POST/redirect/GET: reloading the page that shows the key cannot send the form
      // again. The secret waits, sealed, for that one page (sessions/one-time-view.ts),
      // with what the key reads, which the new-key box repeats.
      const shown: NewKeyView = { name: created.name, key: created.key, reads: readsOf(created) };
      await keepForOneView(app.db, context.sessionIdOf(request), shown);
      return redirect(reply, PAGES.connections);
    } catch (error) {
      if (!(error instanceof KeyManagementError)) throw error;
      const current = await findOrganizationById(app.db, organization.id);
      if (current && request.signed) request.signed.organization = current;
      if (current && !current.apiKeysEnabled) {
        request.log.warn({ userId: user.id }, 'API key generation refused: not allowed');
        return renderConnections(request, reply, 403, {
          error: 'No API key was generated: the organisation does not allow generating API keys.',
        });
      }
      return renderConnections(request, reply, 422, { error: formMessage(error.message), form });
    }
  });

  async function keyOfOrganization(request: FastifyRequest) {
    const { id } = request.params as { id: string };
    const key = await findApiKey(app.db, id);
    return key && key.organizationId === view(request).organization.id ? key : undefined;
  }

  app.get(`${CONNECTIONS}/keys/:id/revoke`, signedIn, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return context.notFound(reply);
    if (key.revokedAt !== null) return redirect(reply, PAGES.connections);
    return sendPage(reply, 200, revokePage({ ...view(request), key }));
  });

  app.post(`${CONNECTIONS}/keys/:id/revoke`, signedInPost, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return context.notFound(reply);
    await revokeApiKeyById(app.db, key.id, context.actorOf(request));
    request.log.info({ keyId: key.id, userId: view(request).user.id }, 'API key revoked');
    return redirect(reply, `${PAGES.connections}?revoked=${encodeURIComponent(key.id)}`);
  });

  app.get(`${CONNECTIONS}/keys/:id/roll`, signedIn, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return context.notFound(reply);
    if (key.revokedAt !== null) return redirect(reply, PAGES.connections);
    return sendPage(reply, 200, rollPage({ ...view(request), key }));
  });

  app.post(`${CONNECTIONS}/keys/:id/roll`, signedInPost, async (request, reply) => {
    const key = await keyOfOrganization(request);
    if (!key) return context.notFound(reply);
    const grace = formField(request, 'grace');
    try {
      const rolled = await rollApiKeyById(
        app.db,
        key.id,
        grace,
        Date.now(),
        context.actorOf(request),
      );
      request.log.info({ keyId: key.id, userId: view(request).user.id }, 'API key rolled');
      // POST/redirect/GET, as for a generated key: the new secret shown once, sealed.
      const rowSlice = rolled.rowSlice && {
        ...rolled.rowSlice,
        employees: await countSliceEmployees(app.db, rolled.rowSlice.id, rolled.cycles),
      };
      const shown: NewKeyView = {
        name: rolled.name,
        key: rolled.key,
        rolledUntil: rolled.previousSecretExpiresAt,
        reads: readsOf({ ...rolled, rowSlice }),
      };
      await keepForOneView(app.db, context.sessionIdOf(request), shown);
      return redirect(reply, PAGES.connections);
    } catch (error) {
      if (!(error instanceof KeyManagementError)) throw error;
      // The roll page again, with the grace period chosen and why nothing was rolled.
      const error_ = formMessage(error.message);
      return sendPage(reply, 422, rollPage({ ...view(request), key, grace, error: error_ }));
    }
  });
};
