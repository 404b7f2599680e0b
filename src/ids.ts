// Public identifiers: a type prefix and a lowercase UUID (docs/api-behaviour.md, "IDs").
import { randomUUID } from 'node:crypto';

// wh: a webhook endpoint; evt: an event; msg: one event's delivery to one endpoint, whose
// id is the webhook-id header (the same on every retry).
export type IdPrefix = 'mc' | 'mce' | 'key' | 'org' | 'user' | 'wh' | 'evt' | 'msg';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

export const ID_PATTERNS: Readonly<Record<IdPrefix, RegExp>> = {
  mc: new RegExp(`^mc_${UUID}$`),
  mce: new RegExp(`^mce_${UUID}$`),
  key: new RegExp(`^key_${UUID}$`),
  org: new RegExp(`^org_${UUID}$`),
  user: new RegExp(`^user_${UUID}$`),
  wh: new RegExp(`^wh_${UUID}$`),
  evt: new RegExp(`^evt_${UUID}$`),
  msg: new RegExp(`^msg_${UUID}$`),
};

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID()}`;
}

export function isId(prefix: IdPrefix, text: string): boolean {
  return ID_PATTERNS[prefix].test(text);
}
