// One change of an organisation's data — an import, or the removal of a merit cycle — as
// delta sync sees it (decisions.md section 4, migration 0010).
//
// Every row the change creates, changes or removes is stamped with the organisation's
// next counter value; the counter itself is advanced at the end, and only if something
// was stamped, so that re-importing identical data advances nothing. The counter is read
// and written inside the change's transaction, after the organisation's import lock
// (load.ts; on PostgreSQL also under the row lock of `for update`), so changes of one
// organisation get their stamps in the order they commit. That is what makes a delta
// token safe: a reader that sees counter value C sees every row stamped C or less, and
// any change not yet committed will be stamped above C (src/changes/delta.ts).
import type { Kysely } from 'kysely';
import type { Dialect } from '../db/connect.js';
import type { Database } from '../db/types.js';

type Tx = Kysely<Database>;

const DAY_MS = 86_400_000;

export class OrganizationChange {
  private changed = false;

  private constructor(
    readonly dialect: Dialect,
    readonly organizationId: string,
    /** The stamp of every row this change writes or removes. */
    readonly stamp: number,
    /** When it happened, ISO 8601: the time of its tombstones. */
    readonly at: string,
    private purgedThrough: number,
  ) {}

  /** Opens the change of an organisation whose import lock the transaction holds. */
  static async begin(
    trx: Tx,
    dialect: Dialect,
    organizationId: string,
    at: string,
  ): Promise<OrganizationChange> {
    let query = trx
      .selectFrom('organizations')
      .select(['change_seq', 'purged_change_seq'])
      .where('id', '=', organizationId);
    if (dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirstOrThrow();
    return new OrganizationChange(
      dialect,
      organizationId,
      Number(row.change_seq) + 1,
      at,
      Number(row.purged_change_seq),
    );
  }

  /** Something was stamped: the counter moves on when the change finishes. */
  stamped(): void {
    this.changed = true;
  }

  get anythingChanged(): boolean {
    return this.changed;
  }

  /**
   * Advances the counter if anything was stamped, and purges the organisation's
   * tombstones older than the retention (remembering the newest stamp purged: tokens from
   * before it can no longer be answered).
   */
  async finish(trx: Tx, retentionDays: number): Promise<void> {
    if (this.changed) {
      await trx
        .updateTable('organizations')
        .set({ change_seq: this.stamp })
        .where('id', '=', this.organizationId)
        .execute();
    }
    const cutoff = new Date(Date.parse(this.at) - retentionDays * DAY_MS).toISOString();
    let purged = this.purgedThrough;
    for (const table of ['removed_employees', 'removed_merit_cycles'] as const) {
      const old = trx
        .selectFrom(table)
        .where('organization_id', '=', this.organizationId)
        .where('removed_at', '<', cutoff);
      const newest = await old
        .select((eb) => eb.fn.max('change_seq').as('stamp'))
        .executeTakeFirst();
      if (newest?.stamp === null || newest?.stamp === undefined) continue;
      purged = Math.max(purged, Number(newest.stamp));
      await trx
        .deleteFrom(table)
        .where('organization_id', '=', this.organizationId)
        .where('removed_at', '<', cutoff)
        .execute();
    }
    if (purged > this.purgedThrough) {
      await trx
        .updateTable('organizations')
        .set({ purged_change_seq: purged })
        .where('id', '=', this.organizationId)
        .execute();
      this.purgedThrough = purged;
    }
  }
}
