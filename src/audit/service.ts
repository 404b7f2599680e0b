// Reading the audit log: what Settings → Audit log and `compplan audit list|export` share.
// The filters a person types are checked here, once, each problem one line; every page is
// of one organisation, newest first, continued after the last entry shown.
import { z } from 'zod';
import { type ApiKey, listApiKeys } from '../api-keys/repository.js';
import type { Db } from '../db/connect.js';
import { ManagementError } from '../errors.js';
import { findOrganizationBySlug, type Organization } from '../tenancy/organizations.js';
import { listUsers } from '../users/repository.js';
import { type AuditAction, isAuditAction } from './entry.js';
import { type AuditFilter, type AuditPosition, usersNamedInLog } from './repository.js';

export class AuditError extends ManagementError {
  override name = 'AuditError';
}

const CALENDAR_DATE = z.iso.date();
const DATE_TIME = z.iso.datetime({ offset: true });
const DAY_MS = 86_400_000;

/**
 * A time a person typed: a date (that day's start, UTC) or an ISO 8601 time with its
 * offset; as ISO 8601 UTC. `endOfDay`: a date means the end of that day (an `until`).
 */
export function timeOf(text: string, option: string, endOfDay = false): string {
  const trimmed = text.trim();
  let at: number;
  if (CALENDAR_DATE.safeParse(trimmed).success) {
    at = Date.parse(`${trimmed}T00:00:00.000Z`) + (endOfDay ? DAY_MS : 0);
  } else if (DATE_TIME.safeParse(trimmed).success) {
    at = Date.parse(trimmed);
  } else {
    throw new AuditError(
      `${option} must be a date (YYYY-MM-DD, UTC) or an ISO 8601 time with its offset; got "${text}"`,
    );
  }
  if (!Number.isFinite(at)) throw new AuditError(`${option}: "${text}" is not a real date`);
  return new Date(at).toISOString();
}

/** An action to filter by, checked against those the log records. */
export function actionOf(text: string): AuditAction {
  if (!isAuditAction(text)) throw new AuditError(`No audit log action "${text}"`);
  return text;
}

// What is accepted as a column key to filter by: enough for any key a person would type.
const MAX_COLUMN_KEY = 200;

/**
 * A column key to filter by (the requests whose answer carried it): as typed, exact and
 * case-sensitive, since column keys are; not empty.
 */
export function columnOf(text: string): string {
  if (text.length === 0) throw new AuditError('The column key to filter by is empty');
  if (text.length > MAX_COLUMN_KEY) {
    throw new AuditError(`A column key has at most ${MAX_COLUMN_KEY} characters`);
  }
  return text;
}

// A page's end as a cursor: the time and id of its last entry. Every page is read within
// one organisation, so a cursor made up by hand shows nothing another cannot.
const CURSOR_SHAPE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~(\d{1,19})$/;

export const cursorOf = (position: AuditPosition): string => `${position.at}~${position.id}`;

export function positionOf(cursor: string): AuditPosition {
  const match = CURSOR_SHAPE.exec(cursor);
  if (!match?.[1] || !match[2] || Number.isNaN(Date.parse(match[1]))) {
    throw new AuditError('The page link is not valid: start again');
  }
  return { at: match[1], id: match[2] };
}

export async function organizationOrFail(db: Db, slug: string): Promise<Organization> {
  const organization = await findOrganizationBySlug(db, slug);
  if (!organization) throw new AuditError(`No organisation with slug "${slug}"`);
  return organization;
}

/** A user the log's User filter offers: a current user, or a removed one the log names. */
export interface AuditUser {
  id: string;
  email: string;
  removed: boolean;
}

/**
 * What the log's filters offer (Settings → Audit log): every key of the organisation,
 * revoked ones too (keys are never deleted), and every user, removed ones too: those the
 * log has entries of, by the email of their latest entry. Current users first, by email.
 */
export async function auditFilterChoices(
  db: Db,
  organizationId: string,
): Promise<{ keys: ApiKey[]; users: AuditUser[] }> {
  const [keys, current, named] = await Promise.all([
    listApiKeys(db, organizationId),
    listUsers(db, organizationId),
    usersNamedInLog(db, organizationId),
  ]);
  const users: AuditUser[] = current.map((user) => ({
    id: user.id,
    email: user.email,
    removed: false,
  }));
  const known = new Set(users.map((user) => user.id));
  const removed = named
    .filter((user) => !known.has(user.id))
    .sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  for (const user of removed) users.push({ ...user, removed: true });
  return { keys, users };
}

export type { AuditFilter };
