// One change of an organisation's data — an import, or the removal of a merit cycle — as
// delta sync sees it (docs/delta-sync.md, migration 0010).
//
// Every row the change creates, changes or removes gets a stamp of its own above the
// organisation's counter, in the order the change writes the rows; the counter itself is
// advanced to the last stamp at the end, and only if something was stamped, so that
// re-importing identical data advances nothing. The counter is read and written inside
// the change's transaction, after the organisation's lock (transaction.ts; on PostgreSQL
// also under the row lock of `for update`), so changes of one organisation get their
// stamps in the order they commit. That is what makes a delta token safe: a reader that
// sees counter value C sees every row stamped C or less, and any change not yet committed
// will be stamped above C (src/modules/deltas/walk.ts).
//
// A stamp a row rather than one an import: the change-order index (merit_cycle_id,
// change_seq, id) is then filled at its end, in the order the rows are written, as the
// table is, instead of at places all over it in id order — an import of 1,000,000 new
// employees took a third more CPU with one stamp for all of them.
import type { Kysely } from 'kysely';
import type { Dialect } from '../db/connect.js';
import type { Database } from '../db/types.js';

type Tx = Kysely<Database>;

const DAY_MS = 86_400_000;

export class OrganizationChange {
  /** The stamp the next row written gets. */
  private next: number;

  private constructor(
    readonly dialect: Dialect,
    readonly organizationId: string,
    /** The organisation's counter when the change began. */
    private readonly counter: number,
    /** When it happened, ISO 8601: the time of its tombstones. */
    readonly at: string,
    private purgedThrough: number,
  ) {
    this.next = counter + 1;
  }

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
      Number(row.change_seq),
      at,
      Number(row.purged_change_seq),
    );
  }

  /**
   * The first stamp of the rows a statement is about to write: it gives them this one
   * and the ones after it, in the order it writes them, then says how many with `used`.
   */
  get nextStamp(): number {
    return this.next;
  }

  /** `count` stamps from nextStamp on were given to rows. */
  used(count: number): void {
    this.next += count;
  }

  private get anythingChanged(): boolean {
    return this.next > this.counter + 1;
  }

  /**
   * Advances the counter if anything was stamped, and purges the organisation's
   * tombstones older than the retention (remembering the newest stamp purged: tokens from
   * before it can no longer be answered).
   */
  async finish(trx: Tx, retentionDays: number): Promise<void> {
    if (this.anythingChanged) {
      await trx
        .updateTable('organizations')
        .set({ change_seq: this.next - 1 })
        .where('id', '=', this.organizationId)
        .execute();
    }
    const cutoff = new Date(Date.parse(this.at) - retentionDays * DAY_MS).toISOString();
    let purged = this.purgedThrough;
    for (const table of [
      'removed_employees',
      'removed_merit_cycles',
      'row_slice_departures',
    ] as const) {
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
