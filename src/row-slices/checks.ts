// A slice checked against the organisation's data before a key is made with it: every
// condition's column a text column (or text part) of the data, and a `--reports-to`
// manager an employee of the cycles the key reads, through the organisation's manager
// column. All problems at once; nothing is written until all pass.
import { KeyManagementError } from '../api-keys/errors.js';
import type { Db } from '../db/connect.js';
import type { Organization } from '../tenancy/organizations.js';
import { checkTextColumns } from './columns.js';
import type { SliceDefinition } from './definition.js';

export async function checkSlice(
  db: Db,
  organization: Organization,
  definition: SliceDefinition,
  cycleIds: readonly string[] | null,
): Promise<void> {
  await checkTextColumns(
    db,
    organization,
    definition.conditions.map(({ column, part }) => ({ column, part })),
    '--rows',
  );
  const manager = definition.reportsTo;
  if (manager === null) return;
  if (organization.managerColumn === null) {
    throw new KeyManagementError(
      `--reports-to needs ${organization.slug}'s manager column, the column that holds each employee's manager's email: name it first with compplan orgs set ${organization.slug} --manager-column KEY (or under Settings → Roles & Permissions)`,
    );
  }
  let query = db
    .selectFrom('merit_cycle_employees')
    .select('id')
    .where('organization_id', '=', organization.id)
    .where('email_key', '=', manager);
  if (cycleIds !== null) query = query.where('merit_cycle_id', 'in', [...cycleIds]);
  if (!(await query.executeTakeFirst())) {
    throw new KeyManagementError(
      `--reports-to: no employee with the email ${manager} in ${cycleIds === null ? `${organization.slug}'s merit cycles` : 'the merit cycles the key reads'}; give the manager's email as the data has it`,
    );
  }
}
