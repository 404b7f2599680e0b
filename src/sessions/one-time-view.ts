// What a page shows exactly once after a form post — the secret of a new API key — kept on
// the server between the POST and the GET its redirect leads to (POST/redirect/GET): never
// in a URL, and never in clear in the database. It is sealed (AES-256-GCM) under a key
// derived from the session id, which only the browser's cookie holds (the database keeps
// its SHA-256), so a copy of the database opens nothing. The first read clears it; one
// left unread (the browser closed) is dropped after VIEW_TTL_MS or with the session.
import { createHmac } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { seal, unseal } from '../sealed-text.js';
import { hashId } from './service.js';

const VIEW_TTL_MS = 10 * 60 * 1000;

const keyOf = (sessionId: string) =>
  createHmac('sha256', sessionId).update('compplan one-time view').digest();

/** Keeps `value` for the next page of this session to show once (replacing an unread one). */
export async function keepForOneView(
  db: Db,
  sessionId: string,
  value: unknown,
  now = new Date(),
): Promise<void> {
  const until = new Date(now.getTime() + VIEW_TTL_MS).toISOString();
  await db
    .updateTable('sessions')
    .set({ one_time_view: seal(keyOf(sessionId), JSON.stringify({ until, value })) })
    .where('id_hash', '=', hashId(sessionId))
    .execute();
}

/**
 * What was kept for this session, once: it is cleared as it is read, and of two requests
 * that read it at the same time only the one whose clearing wins shows it.
 */
export async function takeOneView<T>(
  db: Db,
  sessionId: string,
  now = new Date(),
): Promise<T | undefined> {
  const idHash = hashId(sessionId);
  const row = await db
    .selectFrom('sessions')
    .select('one_time_view')
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  const kept = row?.one_time_view;
  if (!kept) return undefined;
  const cleared = await db
    .updateTable('sessions')
    .set({ one_time_view: null })
    .where('id_hash', '=', idHash)
    .where('one_time_view', '=', kept)
    .executeTakeFirst();
  if (cleared.numUpdatedRows === 0n) return undefined;
  const plain = unseal(keyOf(sessionId), kept);
  if (plain === undefined) return undefined;
  const { until, value } = JSON.parse(plain) as { until: string; value: T };
  return Date.parse(until) > now.getTime() ? value : undefined;
}
