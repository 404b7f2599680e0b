// Changing an organisation's settings (Settings → Roles & Permissions, `compplan orgs
// set`): the change and its audit log entry in one transaction.
import type { Actor } from '../audit/entry.js';
import { withRecordedAction } from '../audit/repository.js';
import type { Db } from '../db/connect.js';
import { setApiKeysEnabled } from '../tenancy/organizations.js';

/** May administrators generate API keys? */
export async function changeApiKeysSetting(
  db: Db,
  organizationId: string,
  enabled: boolean,
  actor: Actor,
): Promise<void> {
  await withRecordedAction(
    db,
    (trx) => setApiKeysEnabled(trx, organizationId, enabled),
    () => ({
      organizationId,
      action: 'settings.changed',
      actor,
      details: { apiKeysEnabled: enabled },
    }),
  );
}
