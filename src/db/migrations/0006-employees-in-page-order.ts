// SQLite: the employees table is stored in the order of the employees list — a WITHOUT
// ROWID table whose primary key is (merit_cycle_id, last_name, first_name, id) — instead
// of a rowid table plus the covering page index of 0003, which held every body a second
// time. A page of employees is still one range scan over adjacent entries (now of the
// table itself), and each body is stored once: a database of the bench data takes about
// a third less space, and an import writes (twice: the WAL, then the database) that much
// less (docs/benchmarks.md). The id stays unique through an index of its own.
//
// The key starts with the cycle, not the organisation: cycle ids are unique across
// organisations, and every query still names the organisation (the page query filters
// on it); each entry of the two other indexes carries the key, so it is kept short.
//
// Changing a SQLite table's primary key means copying the table: up and down copy every
// row, once (docs/operations.md). PostgreSQL keeps its heap and indexes as they are.
//
// The copy also takes PostgreSQL's foreign key of 0005: one key, (merit_cycle_id,
// organization_id) → merit_cycles (id, organization_id), instead of one to each, so that
// on both databases an employee belongs to its cycle's organisation.
import { type Kysely, sql } from 'kysely';

/** The databases this migration was written for. */
type Dialect = 'sqlite' | 'postgres';

const COLUMNS = sql.raw(
  'id, organization_id, merit_cycle_id, email, email_key, first_name, last_name, preferred_name, currency_code, currency_name, eligibility_status, body',
);

/**
 * The table as 0001 made it, without `columns` (0004). `constraints` ends the statement:
 * the table's keys, its closing parenthesis and any table options.
 */
function createTable(name: string, constraints: string) {
  return sql`create table ${sql.table(name)} (
    id text not null,
    organization_id text not null,
    merit_cycle_id text not null,
    email text not null,
    email_key text not null,
    first_name text not null,
    last_name text not null,
    preferred_name text,
    currency_code text not null,
    currency_name text not null,
    eligibility_status text not null check (eligibility_status in ('eligible', 'ineligible')),
    body text not null,
    ${sql.raw(constraints)}`;
}

/** Copies the rows into `name`, in the order of its key, and puts it in the table's place. */
async function replaceTable(db: Kysely<unknown>, name: string): Promise<void> {
  await sql`insert into ${sql.table(name)} (${COLUMNS})
    select ${COLUMNS} from merit_cycle_employees
    order by merit_cycle_id, last_name, first_name, id`.execute(db);
  await sql`drop table merit_cycle_employees`.execute(db);
  await sql`alter table ${sql.table(name)} rename to merit_cycle_employees`.execute(db);
}

export function employeesInPageOrder(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      // The parent key of the foreign key: SQLite wants it unique by an index of its own.
      await sql`create unique index merit_cycles_id_organization_unique
        on merit_cycles (id, organization_id)`.execute(db);
      await createTable(
        'merit_cycle_employees_0006',
        `primary key (merit_cycle_id, last_name, first_name, id),
         constraint merit_cycle_employees_cycle_fkey foreign key (merit_cycle_id, organization_id)
           references merit_cycles (id, organization_id) on delete cascade) without rowid`,
      ).execute(db);
      await replaceTable(db, 'merit_cycle_employees_0006');
      await sql`create unique index merit_cycle_employees_id on merit_cycle_employees (id)`.execute(
        db,
      );
      await sql`create unique index merit_cycle_employees_email_unique
        on merit_cycle_employees (merit_cycle_id, email_key)`.execute(db);
      // The planner's statistics, so that a page reads the table's key, not the email index.
      await sql`analyze merit_cycle_employees`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      await createTable(
        'merit_cycle_employees_0005',
        `primary key (id),
         foreign key (organization_id) references organizations (id),
         foreign key (merit_cycle_id) references merit_cycles (id) on delete cascade,
         constraint merit_cycle_employees_email_unique unique (merit_cycle_id, email_key))`,
      ).execute(db);
      await replaceTable(db, 'merit_cycle_employees_0005');
      await sql`create index merit_cycle_employees_page_covering on merit_cycle_employees
        (organization_id, merit_cycle_id, last_name, first_name, id, body)`.execute(db);
      await sql`drop index merit_cycles_id_organization_unique`.execute(db);
      await sql`analyze merit_cycle_employees`.execute(db);
    },
  };
}
