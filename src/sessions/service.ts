// Sign-in sessions of the web application. The browser holds a random session id (256
// bits) in an httpOnly cookie; the database holds only its SHA-256, so that a copy of
// the database signs nobody in. Each session has its own CSRF token (synchronizer
// token) that every form it posts must carry back.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { toIso } from '../db/values.js';
import { findUserById, type User } from '../users/repository.js';

/** A session ends this long after its last request … */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
/** … and in any case this long after sign-in. */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000;
// last_seen_at is written at most this often, not on every page.
const TOUCH_INTERVAL_MS = 60 * 1000;

export interface Session {
  user: User;
  csrfToken: string;
  /** When the session ends if the browser stays idle. */
  expiresAt: Date;
}

export interface StartedSession extends Session {
  /** The cookie value: shown to the browser only. */
  id: string;
}

/** What the database keeps of a session id (and what other session tables refer to). */
export const hashId = (id: string) => createHash('sha256').update(id).digest('hex');

export const randomToken = () => randomBytes(32).toString('base64url');

export async function startSession(db: Db, user: User, now = new Date()): Promise<StartedSession> {
  const id = randomToken();
  const csrfToken = randomToken();
  const expiresAt = new Date(now.getTime() + SESSION_MAX_MS);
  // Sessions past their 12 hours go whenever someone signs in: the table stays small.
  await db.deleteFrom('sessions').where('expires_at', '<=', now.toISOString()).execute();
  await db
    .insertInto('sessions')
    .values({
      id_hash: hashId(id),
      user_id: user.id,
      csrf_token: csrfToken,
      created_at: now.toISOString(),
      last_seen_at: now.toISOString(),
      expires_at: expiresAt.toISOString(),
    })
    .execute();
  return { id, user, csrfToken, expiresAt: idleEnd(now, expiresAt) };
}

function idleEnd(lastSeen: Date, expiresAt: Date): Date {
  return new Date(Math.min(lastSeen.getTime() + SESSION_IDLE_MS, expiresAt.getTime()));
}

/** The live session this cookie value names, or null (unknown, idle too long, expired). */
export async function resumeSession(
  db: Db,
  id: string | undefined,
  now = new Date(),
): Promise<Session | null> {
  if (!id || id.length > 100) return null;
  const idHash = hashId(id);
  const row = await db
    .selectFrom('sessions')
    .selectAll()
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return null;
  const lastSeen = new Date(toIso(row.last_seen_at));
  const expiresAt = new Date(toIso(row.expires_at));
  if (idleEnd(lastSeen, expiresAt).getTime() <= now.getTime()) {
    await endSession(db, id);
    return null;
  }
  const user = await findUserById(db, row.user_id);
  if (!user) return null;
  if (now.getTime() - lastSeen.getTime() >= TOUCH_INTERVAL_MS) {
    await db
      .updateTable('sessions')
      .set({ last_seen_at: now.toISOString() })
      .where('id_hash', '=', idHash)
      .execute();
    return { user, csrfToken: row.csrf_token, expiresAt: idleEnd(now, expiresAt) };
  }
  return { user, csrfToken: row.csrf_token, expiresAt: idleEnd(lastSeen, expiresAt) };
}

export async function endSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', hashId(id)).execute();
}

/** Ends every session of a user (after a password change). */
export async function endUserSessions(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

/** Constant-time comparison of a submitted token with the expected one. */
export function tokensMatch(submitted: unknown, expected: string): boolean {
  if (typeof submitted !== 'string') return false;
  const a = Buffer.from(submitted);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
