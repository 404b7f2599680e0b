// Versioned migrations, compiled in (no directory scanning), applied in name order.
import { type Migration, type MigrationProvider, type MigrationResult, Migrator } from 'kysely';
import type { DatabaseHandle, Dialect } from './connect.js';
import { initialSchema } from './migrations/0001-initial.js';
import { usersSchema } from './migrations/0002-users.js';
import { coveringPageIndex } from './migrations/0003-covering-page-index.js';
import { columnsOnlyInBody } from './migrations/0004-columns-only-in-body.js';
import { employeeCycleKey } from './migrations/0005-employee-cycle-key.js';
import { employeesInPageOrder } from './migrations/0006-employees-in-page-order.js';
import { apiKeysRevision } from './migrations/0007-api-keys-revision.js';
import { webForms } from './migrations/0008-web-forms.js';
import { leastPrivilegeKeys } from './migrations/0009-least-privilege-keys.js';
import { changeTracking } from './migrations/0010-change-tracking.js';
import { webhooksSchema } from './migrations/0011-webhooks.js';
import { auditLog } from './migrations/0012-audit-log.js';
import { columnSchema } from './migrations/0013-column-schema.js';
import { webManagement } from './migrations/0014-web-management.js';
import { auditColumnsServed } from './migrations/0015-audit-columns-served.js';
import { hiddenColumnTypes } from './migrations/0016-hidden-column-types.js';
import { uploadSlots } from './migrations/0017-upload-slots.js';
import { rowSlices } from './migrations/0018-row-slices.js';
import { uploadProblems } from './migrations/0019-upload-problems.js';
import { flatLines } from './migrations/0020-flat-lines.js';

function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-initial': initialSchema(dialect),
    '0002-users': usersSchema(dialect),
    '0003-covering-page-index': coveringPageIndex(dialect),
    '0004-columns-only-in-body': columnsOnlyInBody(dialect),
    '0005-employee-cycle-key': employeeCycleKey(dialect),
    '0006-employees-in-page-order': employeesInPageOrder(dialect),
    '0007-api-keys-revision': apiKeysRevision(dialect),
    '0008-web-forms': webForms(dialect),
    '0009-least-privilege-keys': leastPrivilegeKeys(dialect),
    '0010-change-tracking': changeTracking(dialect),
    '0011-webhooks': webhooksSchema(dialect),
    '0012-audit-log': auditLog(dialect),
    '0013-column-schema': columnSchema(dialect),
    '0014-web-management': webManagement(dialect),
    '0015-audit-columns-served': auditColumnsServed(),
    '0016-hidden-column-types': hiddenColumnTypes(dialect),
    '0017-upload-slots': uploadSlots(dialect),
    '0018-row-slices': rowSlices(dialect),
    '0019-upload-problems': uploadProblems(),
    '0020-flat-lines': flatLines(),
  };
}

class CompiledMigrations implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations(this.dialect);
  }
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** The migrator of compplan's migrations (Kysely's, which records them in the database). */
export function migratorOf({ longDb, dialect }: DatabaseHandle): Migrator {
  // A migration's statements take as long as the data makes them: long work (connect.ts).
  return new Migrator({ db: longDb, provider: new CompiledMigrations(dialect) });
}

/** Applies every pending migration; returns the names of those applied now. */
export async function migrateToLatest(database: DatabaseHandle): Promise<string[]> {
  const { error, results } = await migratorOf(database).migrateToLatest();
  if (error) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    // No failed migration: it failed before any ran (the database could not be reached,
    // opened or locked); `cause` keeps the error itself for the command line to describe.
    const what = failed
      ? `Migration ${failed.migrationName} failed`
      : 'Could not migrate the database';
    throw new MigrationError(`${what}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
