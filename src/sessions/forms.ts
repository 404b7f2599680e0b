// Each form a signed-in page renders carries a random form id (the hidden _form field)
// next to the session's CSRF token. The first post of a form id is taken; the same form
// sent again — the browser resending it after Back, a double click, a replayed request —
// is recognised and does nothing (docs/web-app.md).
import type { Db } from '../db/connect.js';
import { hashId, randomToken } from './service.js';

export const FORM_ID_FIELD = '_form';
export const FORM_ID_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A new form's id. */
export const newFormId = randomToken;

/** True the first time this session sends this form id; false for every later time. */
export async function claimFormId(
  db: Db,
  sessionId: string,
  formId: string,
  now = new Date(),
): Promise<boolean> {
  const result = await db
    .insertInto('session_forms')
    .values({ session_id_hash: hashId(sessionId), form_id: formId, sent_at: now.toISOString() })
    .onConflict((conflict) => conflict.columns(['session_id_hash', 'form_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}
