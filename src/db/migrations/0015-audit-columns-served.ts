// The audit log's columns served (docs/security.md, "Audit log"): for every request entry
// that served employees, the column keys present in its answer, after the key's hidden
// columns and $select. Stored as text, each key JSON-encoded and the list sorted, between
// commas (`,"basePay","bonus",`): "which keys read basePay" is a search for `,"basePay",`
// in that text, exact whatever a key holds (a `"` inside a key is written `\"`, so `,"`
// never occurs inside one). Null when the answer carried no employee.
//
// No index for it: the filter is always within one organisation and, in practice, a time
// range, which audit_entries_by_organization (migration 0012) reads newest first; a B-tree
// cannot answer a search inside the text anyway.
//
// The audit log's User filter lists removed users too (src/audit/service.ts): the users
// who appear in an organisation's entries, read through an index of the entries that have
// a user (actions of the web application's users: few beside the requests), partial on
// both databases.
import { type Kysely, sql } from 'kysely';

export function auditColumnsServed() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('audit_entries').addColumn('columns_served', 'text').execute();
      await db.schema
        .createIndex('audit_entries_by_user')
        .on('audit_entries')
        .columns(['organization_id', 'user_id'])
        .where(sql.ref('user_id'), 'is not', null)
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('audit_entries_by_user').execute();
      await db.schema.alterTable('audit_entries').dropColumn('columns_served').execute();
    },
  };
}
