// Reading the audit log in tests: what the server has written, after its writer has
// flushed, for one organisation (by slug), oldest first.
import type { AuditEntry } from '../../src/audit/entry.js';
import { listAuditEntries } from '../../src/audit/repository.js';
import type { Db } from '../../src/db/connect.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';

export async function auditEntriesOf(db: Db, slug: string): Promise<AuditEntry[]> {
  const organization = await findOrganizationBySlug(db, slug);
  if (!organization) throw new Error(`no organisation ${slug}`);
  const entries = await listAuditEntries(db, organization.id, {}, { limit: 100_000 });
  return entries.reverse();
}

export const requestsOf = (entries: readonly AuditEntry[]) =>
  entries.filter((entry) => entry.action === 'api.request');
