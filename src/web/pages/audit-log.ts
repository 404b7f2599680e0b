// Settings → Audit log (docs/web-app.md): an organisation's audit log, for its owners
// only — administrators get 403, as for Roles & Permissions. Filters by key, user,
// action, dates and column served; newest first, 50 entries a page, continued with a cursor. Every
// read is of the signed-in user's organisation, whatever the query says.
import type { FastifyReply } from 'fastify';
import { organizationColumns } from '../../api-keys/columns.js';
import { type AuditFilter, listAuditEntries } from '../../audit/repository.js';
import {
  AuditError,
  actionOf,
  auditFilterChoices,
  columnOf,
  cursorOf,
  positionOf,
  timeOf,
} from '../../audit/service.js';
import { isId } from '../../ids.js';
import { slicesById } from '../../row-slices/repository.js';
import type { Page } from '../context.js';
import { sendPage } from '../http.js';
import { alert, settingsLayout } from '../layout.js';
import { PAGES, routeOf } from '../paths.js';
import { type AuditQuery, auditPage } from './audit-log.views.js';

const PAGE_SIZE = 50;

/** The filters of the query, checked; an AuditError names the first problem. */
function filterOf(query: AuditQuery): AuditFilter {
  if (query.key !== '' && !isId('key', query.key))
    throw new AuditError('Choose an API key from the list');
  if (query.user !== '' && !isId('user', query.user))
    throw new AuditError('Choose a user from the list');
  return {
    keyId: query.key || undefined,
    userId: query.user || undefined,
    action: query.action === '' ? undefined : actionOf(query.action),
    column: query.column === '' ? undefined : columnOf(query.column),
    since: query.from === '' ? undefined : timeOf(query.from, 'From'),
    until: query.to === '' ? undefined : timeOf(query.to, 'To', true),
  };
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

export const auditLogPages: Page = (app, context) => {
  app.get(routeOf(PAGES.auditLog), context.signedIn, async (request, reply: FastifyReply) => {
    const signed = context.view(request);
    if (signed.user.role !== 'owner') {
      request.log.warn({ userId: signed.user.id }, 'audit log refused: not an owner');
      return sendPage(
        reply,
        403,
        settingsLayout(
          signed,
          'audit',
          'Audit log',
          alert('error', 'Only an owner of the organisation can see its audit log.'),
        ),
      );
    }
    const raw = (request.query ?? {}) as Record<string, unknown>;
    const query: AuditQuery = {
      key: text(raw.key),
      user: text(raw.user),
      action: text(raw.action),
      from: text(raw.from),
      to: text(raw.to),
      column: text(raw.column),
    };
    const organizationId = signed.organization.id;
    const [{ keys, users }, columns] = await Promise.all([
      auditFilterChoices(app.db, organizationId),
      organizationColumns(app.db, organizationId),
    ]);
    const base = { ...signed, query, keys, users, columns, later: text(raw.after) !== '' };
    let filter: AuditFilter;
    let after: ReturnType<typeof positionOf> | undefined;
    try {
      filter = filterOf(query);
      after = text(raw.after) === '' ? undefined : positionOf(text(raw.after));
    } catch (error) {
      if (!(error instanceof AuditError)) throw error;
      return sendPage(reply, 422, auditPage({ ...base, entries: [], error: error.message }));
    }
    // This instance's request entries still in memory: written first, so they are shown.
    await app.audit.flush();
    const found = await listAuditEntries(app.db, organizationId, filter, {
      after,
      limit: PAGE_SIZE + 1,
    });
    const entries = found.slice(0, PAGE_SIZE);
    const last = entries.at(-1);
    const older =
      found.length > PAGE_SIZE && last
        ? new URLSearchParams({
            ...Object.fromEntries(Object.entries(query).filter(([, value]) => value !== '')),
            after: cursorOf({ at: last.at, id: last.id }),
          }).toString()
        : undefined;
    const sliceIds = entries.flatMap((entry) =>
      entry.rowSliceId === null ? [] : [entry.rowSliceId],
    );
    const slices = new Map(
      [...(await slicesById(app.db, [...new Set(sliceIds)]))].map(([id, slice]) => [
        id,
        slice.description,
      ]),
    );
    return sendPage(reply, 200, auditPage({ ...base, entries, older, slices }));
  });
};
