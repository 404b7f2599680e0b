// PostgreSQL: an employee row refers to its merit cycle and organisation with one foreign
// key, (merit_cycle_id, organization_id) → merit_cycles (id, organization_id), instead of
// one to each. It says more (an employee belongs to its cycle's organisation, which only
// the import made sure of) and costs one check a row instead of two: PostgreSQL checks a
// foreign key per inserted row with a query of its own, and the two checks were a third
// of inserting an employee (docs/benchmarks.md). The organisation is still known to
// exist: merit_cycles refers to it.
//
// SQLite gets the same key from 0006, which copies its table anyway (changing a SQLite
// table's constraints means copying it); there a check is a lookup in the parent's index,
// a few per cent of an insert, the same for one key or two.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

export function employeeCycleKey(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`alter table merit_cycles
        add constraint merit_cycles_id_organization_unique unique (id, organization_id)`.execute(
        db,
      );
      await sql`alter table merit_cycle_employees
        drop constraint merit_cycle_employees_organization_id_fkey,
        drop constraint merit_cycle_employees_merit_cycle_id_fkey,
        add constraint merit_cycle_employees_cycle_fkey foreign key (merit_cycle_id, organization_id)
          references merit_cycles (id, organization_id) on delete cascade`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`alter table merit_cycle_employees
        drop constraint merit_cycle_employees_cycle_fkey,
        add constraint merit_cycle_employees_organization_id_fkey foreign key (organization_id)
          references organizations (id),
        add constraint merit_cycle_employees_merit_cycle_id_fkey foreign key (merit_cycle_id)
          references merit_cycles (id) on delete cascade`.execute(db);
      await sql`alter table merit_cycles
        drop constraint merit_cycles_id_organization_unique`.execute(db);
    },
  };
}
