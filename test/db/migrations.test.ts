// Migrations that change what is stored, applied to a database with data in it: the API
// serves the same answers on each side of them, and going down restores what was dropped.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeysRevision } from '../../src/api-keys/repository.js';
import { migrateToLatest, migratorOf } from '../../src/db/migrate.js';
import { ACME, ADA_ID, acmeDataSet, CYCLE, GLOBEX, globexDataSet } from '../fixtures/data-sets.js';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/databases.js';
import { startTestServer } from '../helpers/server.js';
import { apiSnapshot, dumpTables, inStableOrder } from '../helpers/snapshot.js';

describe('migrations 0004–0006 down and up again, on a database with data', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  /** The API as a new server on the database serves it (nothing cached from before). */
  async function servedToAcme() {
    const server = await startTestServer({ database: database.config });
    try {
      return await apiSnapshot(server, await server.createKey(ACME, 'migration check'));
    } finally {
      await server.close();
    }
  }

  async function employeeColumns(server: Awaited<ReturnType<typeof startTestServer>>) {
    const columns = await server.database.db.introspection.getTables();
    return columns
      .find((table) => table.name === 'merit_cycle_employees')
      ?.columns.map((c) => c.name);
  }

  it('down adds `columns` back, filled from each body; up drops it again; the API serves the same', async () => {
    const server = await startTestServer({
      database: database.config,
      dataSets: [acmeDataSet(), globexDataSet()],
    });
    let before: Awaited<ReturnType<typeof apiSnapshot>>;
    try {
      before = await apiSnapshot(server, await server.createKey(ACME, 'before'));
      expect(await employeeColumns(server)).not.toContain('columns');
      // Without their change stamps: going below 0010 ends change tracking, and coming
      // back starts it again from 0 (a token from before then gets 410). Without their flat
      // lines: going below 0020 drops them, and employees stored before have none (their
      // flat CSV is made from their JSON text).
      const unstamped = (rows: unknown[] | undefined) =>
        (rows as Record<string, unknown>[] | undefined)?.map(
          ({ change_seq: _stamp, flat_key: _key, flat_line: _line, ...row }) => row,
        );
      const employeesBefore = unstamped(
        (await dumpTables(server.database.db)).merit_cycle_employees,
      );

      const down = await migratorOf(server.database).migrateTo('0003-covering-page-index');
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
        ['0020-flat-lines', 'Down', 'Success'],
        ['0019-upload-problems', 'Down', 'Success'],
        ['0018-row-slices', 'Down', 'Success'],
        ['0017-upload-slots', 'Down', 'Success'],
        ['0016-hidden-column-types', 'Down', 'Success'],
        ['0015-audit-columns-served', 'Down', 'Success'],
        ['0014-web-management', 'Down', 'Success'],
        ['0013-column-schema', 'Down', 'Success'],
        ['0012-audit-log', 'Down', 'Success'],
        ['0011-webhooks', 'Down', 'Success'],
        ['0010-change-tracking', 'Down', 'Success'],
        ['0009-least-privilege-keys', 'Down', 'Success'],
        ['0008-web-forms', 'Down', 'Success'],
        ['0007-api-keys-revision', 'Down', 'Success'],
        ['0006-employees-in-page-order', 'Down', 'Success'],
        ['0005-employee-cycle-key', 'Down', 'Success'],
        ['0004-columns-only-in-body', 'Down', 'Success'],
      ]);
      const { rows } = await sql<{ columns: string; body: string }>`
        select columns, body from merit_cycle_employees`.execute(server.database.db);
      expect(rows.length).toBeGreaterThan(10);
      for (const row of rows) {
        expect(JSON.parse(row.columns)).toStrictEqual(JSON.parse(row.body).columns);
      }

      expect(await migrateToLatest(server.database)).toEqual([
        '0004-columns-only-in-body',
        '0005-employee-cycle-key',
        '0006-employees-in-page-order',
        '0007-api-keys-revision',
        '0008-web-forms',
        '0009-least-privilege-keys',
        '0010-change-tracking',
        '0011-webhooks',
        '0012-audit-log',
        '0013-column-schema',
        '0014-web-management',
        '0015-audit-columns-served',
        '0016-hidden-column-types',
        '0017-upload-slots',
        '0018-row-slices',
        '0019-upload-problems',
        '0020-flat-lines',
      ]);
      expect(await employeeColumns(server)).not.toContain('columns');
      expect(unstamped((await dumpTables(server.database.db)).merit_cycle_employees)).toStrictEqual(
        employeesBefore,
      );
    } finally {
      await server.close();
    }
    expect(await servedToAcme()).toStrictEqual(before);
  });
});

// SQLite only: PostgreSQL keeps its heap and its page index (see the migration).
if (testDialect() === 'sqlite') {
  describe('migration 0006: SQLite stores the employees in the order of the list', () => {
    let server: Awaited<ReturnType<typeof startTestServer>>;
    beforeAll(async () => {
      server = await startTestServer({ dataSets: [acmeDataSet()] });
    });
    afterAll(() => server.close());

    it('a WITHOUT ROWID table keyed (cycle, last name, first name, id); a page is one scan of that key, unsorted; ids and emails stay unique', async () => {
      const { db } = server.database;
      const { rows: schema } = await sql<{ type: string; name: string; sql: string | null }>`
        select type, name, sql from sqlite_master where tbl_name = 'merit_cycle_employees'
        order by type, name`.execute(db);
      expect(schema.map(({ type, name }) => `${type} ${name}`)).toEqual([
        'index merit_cycle_employees_changes',
        'index merit_cycle_employees_email_unique',
        'index merit_cycle_employees_id',
        // The reporting lines' index of migration 0018.
        'index merit_cycle_employees_managers',
        'table merit_cycle_employees',
      ]);
      expect(schema[4]?.sql).toMatch(/primary key \(merit_cycle_id, last_name, first_name, id\),/);
      expect(schema[4]?.sql).toMatch(/\) without rowid$/);
      // The page query of src/modules/employees/repository.ts, past a cursor.
      const { rows: plan } = await sql<{ detail: string }>`
        explain query plan
        select body from merit_cycle_employees
         where organization_id = 'o' and merit_cycle_id = 'c'
           and (last_name, first_name, id) > ('a', 'b', 'c')
         order by last_name, first_name, id limit 101`.execute(db);
      expect(plan.map((step) => step.detail)).toEqual([
        'SEARCH merit_cycle_employees USING PRIMARY KEY (merit_cycle_id=? AND (last_name,first_name,id)>(?,?,?))',
      ]);

      const ada = await db
        .selectFrom('merit_cycle_employees')
        .selectAll()
        .where('id', '=', ADA_ID)
        .executeTakeFirstOrThrow();
      const insert = (row: typeof ada) =>
        db.insertInto('merit_cycle_employees').values(row).execute();
      await expect(
        insert({ ...ada, last_name: 'Else', email_key: 'someone.else@acme.example' }),
      ).rejects.toThrow('UNIQUE constraint failed: merit_cycle_employees.id');
      await expect(
        insert({ ...ada, id: 'mce_90000000-0000-4000-8000-000000000001', last_name: 'Else' }),
      ).rejects.toThrow(
        'UNIQUE constraint failed: merit_cycle_employees.merit_cycle_id, merit_cycle_employees.email_key',
      );
    });
  });
}

// PostgreSQL's 0005; SQLite's table gets the same key when 0006 copies it.
describe('one foreign key from an employee to its cycle and organisation (0005; 0006 on SQLite)', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet(), globexDataSet()] });
  });
  afterAll(() => server.close());

  /** The table's foreign keys, each as `(columns) → table(columns)`. */
  const foreignKeys = async () => {
    const { db } = server.database;
    if (testDialect() === 'postgres') {
      const { rows } = await sql<{ definition: string }>`
        select pg_get_constraintdef(oid) as definition from pg_constraint
         where conrelid = 'merit_cycle_employees'::regclass and contype = 'f'`.execute(db);
      return rows
        .map(({ definition }) =>
          definition
            .replace(/^FOREIGN KEY /, '')
            .replace(' REFERENCES ', ' → ')
            .replace(' ON DELETE CASCADE', ' cascade'),
        )
        .sort();
    }
    const { rows } = await sql<{
      id: number;
      table: string;
      from: string;
      to: string;
      on_delete: string;
    }>`
      select * from pragma_foreign_key_list('merit_cycle_employees') order by id, seq`.execute(db);
    const keys = new Map<number, typeof rows>();
    for (const row of rows) keys.set(row.id, [...(keys.get(row.id) ?? []), row]);
    return [...keys.values()]
      .map((columns) => {
        const first = columns[0] as (typeof columns)[number];
        const from = columns.map((c) => c.from).join(', ');
        const to = columns.map((c) => c.to).join(', ');
        return `(${from}) → ${first.table}(${to})${first.on_delete === 'CASCADE' ? ' cascade' : ''}`;
      })
      .sort();
  };

  it('refuses an employee of another organisation than its cycle’s; a deleted cycle takes its employees along; down restores the two keys', async () => {
    const { db } = server.database;
    expect(await foreignKeys()).toEqual([
      '(merit_cycle_id, organization_id) → merit_cycles(id, organization_id) cascade',
    ]);
    const globex = await db
      .selectFrom('organizations')
      .select('id')
      .where('slug', '=', GLOBEX)
      .executeTakeFirstOrThrow();
    const ada = await db
      .selectFrom('merit_cycle_employees')
      .selectAll()
      .where('id', '=', ADA_ID)
      .executeTakeFirstOrThrow();
    const elsewhere = db
      .insertInto('merit_cycle_employees')
      .values({
        ...ada,
        id: 'mce_90000000-0000-4000-8000-000000000001',
        email_key: 'someone.else@acme.example',
        organization_id: globex.id,
      })
      .execute();
    await expect(elsewhere).rejects.toMatchObject(
      testDialect() === 'postgres'
        ? { code: '23503', constraint: 'merit_cycle_employees_cycle_fkey' }
        : { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' },
    );

    await db.deleteFrom('merit_cycles').where('id', '=', CYCLE.annual2025).execute();
    const left = await db
      .selectFrom('merit_cycle_employees')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('merit_cycle_id', '=', CYCLE.annual2025)
      .executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);

    const down = await migratorOf(server.database).migrateTo('0004-columns-only-in-body');
    expect(down.results?.map((r) => [r.migrationName, r.status])).toEqual([
      ['0020-flat-lines', 'Success'],
      ['0019-upload-problems', 'Success'],
      ['0018-row-slices', 'Success'],
      ['0017-upload-slots', 'Success'],
      ['0016-hidden-column-types', 'Success'],
      ['0015-audit-columns-served', 'Success'],
      ['0014-web-management', 'Success'],
      ['0013-column-schema', 'Success'],
      ['0012-audit-log', 'Success'],
      ['0011-webhooks', 'Success'],
      ['0010-change-tracking', 'Success'],
      ['0009-least-privilege-keys', 'Success'],
      ['0008-web-forms', 'Success'],
      ['0007-api-keys-revision', 'Success'],
      ['0006-employees-in-page-order', 'Success'],
      ['0005-employee-cycle-key', 'Success'],
    ]);
    expect(await foreignKeys()).toEqual([
      '(merit_cycle_id) → merit_cycles(id) cascade',
      '(organization_id) → organizations(id)',
    ]);
    expect(await migrateToLatest(server.database)).toEqual([
      '0005-employee-cycle-key',
      '0006-employees-in-page-order',
      '0007-api-keys-revision',
      '0008-web-forms',
      '0009-least-privilege-keys',
      '0010-change-tracking',
      '0011-webhooks',
      '0012-audit-log',
      '0013-column-schema',
      '0014-web-management',
      '0015-audit-columns-served',
      '0016-hidden-column-types',
      '0017-upload-slots',
      '0018-row-slices',
      '0019-upload-problems',
      '0020-flat-lines',
    ]);
    expect(await foreignKeys()).toHaveLength(1);
  });
});

describe('migration 0009 down and up again, with keys in use', () => {
  it('down drops the columns 0009 added (0007’s trigger still fires on its own); up adds them back, watched; keys made before keep working', async () => {
    const server = await startTestServer({ dataSets: [acmeDataSet()] });
    try {
      const { db } = server.database;
      const scoped = await server.createKey(ACME, 'scoped', {
        cycles: [CYCLE.annual2025],
        hiddenColumns: ['department'],
      });
      const full = await server.createKey(ACME, 'full');
      const apiKeyColumns = async () =>
        (await db.introspection.getTables())
          .find((table) => table.name === 'api_keys')
          ?.columns.map((c) => c.name);
      const added = [
        'cycle_scope',
        'hidden_columns',
        'expires_at',
        'previous_secret_hash',
        'previous_secret_expires_at',
        'last_used_address',
      ];
      expect(await apiKeyColumns()).toEqual(expect.arrayContaining(added));

      const down = await migratorOf(server.database).migrateTo('0008-web-forms');
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
        ['0020-flat-lines', 'Down', 'Success'],
        ['0019-upload-problems', 'Down', 'Success'],
        ['0018-row-slices', 'Down', 'Success'],
        ['0017-upload-slots', 'Down', 'Success'],
        ['0016-hidden-column-types', 'Down', 'Success'],
        ['0015-audit-columns-served', 'Down', 'Success'],
        ['0014-web-management', 'Down', 'Success'],
        ['0013-column-schema', 'Down', 'Success'],
        ['0012-audit-log', 'Down', 'Success'],
        ['0011-webhooks', 'Down', 'Success'],
        ['0010-change-tracking', 'Down', 'Success'],
        ['0009-least-privilege-keys', 'Down', 'Success'],
      ]);
      const columns = await apiKeyColumns();
      for (const name of added) expect(columns).not.toContain(name);
      const revision = await readKeysRevision(db);
      await sql`update api_keys set revoked_at = revoked_at where name = 'scoped'`.execute(db);
      expect(await readKeysRevision(db)).toBeGreaterThan(revision);

      expect(await migrateToLatest(server.database)).toEqual([
        '0009-least-privilege-keys',
        '0010-change-tracking',
        '0011-webhooks',
        '0012-audit-log',
        '0013-column-schema',
        '0014-web-management',
        '0015-audit-columns-served',
        '0016-hidden-column-types',
        '0017-upload-slots',
        '0018-row-slices',
        '0019-upload-problems',
        '0020-flat-lines',
      ]);
      expect(await apiKeyColumns()).toEqual(expect.arrayContaining(added));
      const before = await readKeysRevision(db);
      await sql`update api_keys set hidden_columns = '["employee"]' where name = 'scoped'`.execute(
        db,
      );
      expect(await readKeysRevision(db)).toBeGreaterThan(before);
      // The scope went with the down: the key reads every cycle, like the full key.
      await server.app.apiKeys.confirm();
      for (const key of [scoped, full]) {
        const response = await server.request('/v1/compensationPlanning/meritCycles', { key });
        expect(response.status).toBe(200);
        expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(6);
      }
    } finally {
      await server.close();
    }
  });
});

describe('migration 0012 down and up again', () => {
  it('down drops the audit log and the allowlists (the 0009 columns stay watched); up brings them back, the allowlist watched too', async () => {
    const server = await startTestServer({ dataSets: [acmeDataSet()] });
    try {
      const { db } = server.database;
      await server.createKey(ACME, 'bound', { allowedAddresses: ['127.0.0.1'] });
      const tables = async () => (await db.introspection.getTables()).map((table) => table.name);
      const apiKeyColumns = async () =>
        (await db.introspection.getTables())
          .find((table) => table.name === 'api_keys')
          ?.columns.map((c) => c.name);
      expect(await tables()).toContain('audit_entries');

      const down = await migratorOf(server.database).migrateTo('0011-webhooks');
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
        ['0020-flat-lines', 'Down', 'Success'],
        ['0019-upload-problems', 'Down', 'Success'],
        ['0018-row-slices', 'Down', 'Success'],
        ['0017-upload-slots', 'Down', 'Success'],
        ['0016-hidden-column-types', 'Down', 'Success'],
        ['0015-audit-columns-served', 'Down', 'Success'],
        ['0014-web-management', 'Down', 'Success'],
        ['0013-column-schema', 'Down', 'Success'],
        ['0012-audit-log', 'Down', 'Success'],
      ]);
      expect(await tables()).not.toContain('audit_entries');
      expect(await apiKeyColumns()).not.toContain('allowed_addresses');
      let revision = await readKeysRevision(db);
      await sql`update api_keys set expires_at = expires_at where name = 'bound'`.execute(db);
      expect(await readKeysRevision(db)).toBeGreaterThan(revision);

      expect(await migrateToLatest(server.database)).toEqual([
        '0012-audit-log',
        '0013-column-schema',
        '0014-web-management',
        '0015-audit-columns-served',
        '0016-hidden-column-types',
        '0017-upload-slots',
        '0018-row-slices',
        '0019-upload-problems',
        '0020-flat-lines',
      ]);
      expect(await apiKeyColumns()).toContain('allowed_addresses');
      revision = await readKeysRevision(db);
      await sql`update api_keys set allowed_addresses = '["10.0.0.0/8"]' where name = 'bound'`.execute(
        db,
      );
      expect(await readKeysRevision(db)).toBeGreaterThan(revision);
    } finally {
      await server.close();
    }
  });
});

describe('migration 0016 down and up again', () => {
  it('down drops the hidden column types (the allowlist stays watched); up brings them back, watched, and a key hiding a type keeps hiding it', async () => {
    const server = await startTestServer({ dataSets: [acmeDataSet()] });
    try {
      const { db } = server.database;
      await server.createKey(ACME, 'typed', { hiddenColumnTypes: ['number'] });
      const apiKeyColumns = async () =>
        (await db.introspection.getTables())
          .find((table) => table.name === 'api_keys')
          ?.columns.map((c) => c.name);
      expect(await apiKeyColumns()).toContain('hidden_column_types');

      const down = await migratorOf(server.database).migrateTo('0015-audit-columns-served');
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
        ['0020-flat-lines', 'Down', 'Success'],
        ['0019-upload-problems', 'Down', 'Success'],
        ['0018-row-slices', 'Down', 'Success'],
        ['0017-upload-slots', 'Down', 'Success'],
        ['0016-hidden-column-types', 'Down', 'Success'],
      ]);
      expect(await apiKeyColumns()).not.toContain('hidden_column_types');
      let revision = await readKeysRevision(db);
      await sql`update api_keys set allowed_addresses = '["10.0.0.0/8"]' where name = 'typed'`.execute(
        db,
      );
      expect(await readKeysRevision(db)).toBeGreaterThan(revision);

      expect(await migrateToLatest(server.database)).toEqual([
        '0016-hidden-column-types',
        '0017-upload-slots',
        '0018-row-slices',
        '0019-upload-problems',
        '0020-flat-lines',
      ]);
      revision = await readKeysRevision(db);
      await sql`update api_keys set hidden_column_types = '["currency"]' where name = 'typed'`.execute(
        db,
      );
      expect(await readKeysRevision(db)).toBeGreaterThan(revision);
    } finally {
      await server.close();
    }
  });
});

describe('migration 0013: the column schema of cycles stored before it', () => {
  it("builds each cycle's schema from its employees' stored columns (a key with two types: the more frequent), leaving every employee as it was", async () => {
    const database = await createTestDatabase();
    const cycles = acmeDataSet().meritCycles.map((cycle) => cycle.id ?? '');
    /** Every cycle's columns as a new server serves them (nothing kept from before). */
    const served = async () => {
      const server = await startTestServer({ database: database.config });
      try {
        const key = await server.createKey(ACME, 'columns');
        const columns: Record<string, { key: string }[]> = {};
        for (const cycle of cycles) {
          const response = await server.request(
            `/v1/compensationPlanning/meritCycles/${cycle}/columns`,
            { key },
          );
          expect(response.status).toBe(200);
          columns[cycle] = ((await response.json()) as { data: { key: string }[] }).data;
        }
        return columns;
      } finally {
        await server.close();
      }
    };
    try {
      const server = await startTestServer({
        database: database.config,
        dataSets: [acmeDataSet(), globexDataSet()],
      });
      let employeesBefore: unknown[] | undefined;
      try {
        const { db } = server.database;
        const down = await migratorOf(server.database).migrateTo('0012-audit-log');
        expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
          ['0020-flat-lines', 'Down', 'Success'],
          ['0019-upload-problems', 'Down', 'Success'],
          ['0018-row-slices', 'Down', 'Success'],
          ['0017-upload-slots', 'Down', 'Success'],
          ['0016-hidden-column-types', 'Down', 'Success'],
          ['0015-audit-columns-served', 'Down', 'Success'],
          ['0014-web-management', 'Down', 'Success'],
          ['0013-column-schema', 'Down', 'Success'],
        ]);
        // Data loaded before the import checked types: `tenure` is text for two employees
        // of the 2025 cycle and a number for one; a composite with a currency part.
        const legacy = (name: string, columns: string) =>
          sql`update merit_cycle_employees
                 set body = replace(body, '"columns":{', ${`"columns":{${columns},`})
               where first_name = ${name} and merit_cycle_id = ${CYCLE.annual2025}`.execute(db);
        await legacy('Ada', '"tenure":{"name":"Tenure (years)","type":"text","value":12}');
        await legacy(
          'Alan',
          '"tenure":{"name":"Tenure (years)","type":"text","value":"long"},"pay":{"name":"Pay","type":"composite","value":{"base":{"USD":"1"},"note":"x"}}',
        );
        // The employees alone: a table the migrations in between reshape (users, 0014) would
        // fail PostgreSQL's prepared statement of the dump read before and after. The
        // employees table is reshaped too (0018 adds manager_key): a statement of its own
        // text (`when`) each time.
        const employees = async (when: string) =>
          inStableOrder(
            (
              await sql<
                Record<string, unknown>
              >`select * from merit_cycle_employees where ${sql.lit(when)} = ${sql.lit(when)}`.execute(
                db,
              )
            ).rows,
          );
        employeesBefore = await employees('before');
        expect(await migrateToLatest(server.database)).toEqual([
          '0013-column-schema',
          '0014-web-management',
          '0015-audit-columns-served',
          '0016-hidden-column-types',
          '0017-upload-slots',
          '0018-row-slices',
          '0019-upload-problems',
          '0020-flat-lines',
        ]);
        // As they were, with 0018's manager email beside them (none: no manager column) and
        // 0020's flat line (none: stored before it).
        expect(
          (await employees('after')).map((row) => {
            const { manager_key, flat_key, flat_line, ...employee } = row as Record<
              string,
              unknown
            >;
            expect([manager_key, flat_key, flat_line]).toEqual([null, null, null]);
            return employee;
          }),
        ).toEqual(employeesBefore);
      } finally {
        await server.close();
      }
      const columns = await served();
      const text = (key: string, name: string) => ({ key, name, type: 'text', parts: null });
      expect(columns[CYCLE.annual2025]).toEqual([
        text('department', 'Department'),
        {
          key: 'employee',
          name: 'Employee',
          type: 'composite',
          parts: ['fullName', 'jobLevel', 'jobTitle'].map((key) => ({ key, type: 'text' })),
        },
        { key: 'notes', name: 'Notes', type: 'note', parts: null },
        {
          key: 'pay',
          name: 'Pay',
          type: 'composite',
          parts: [
            { key: 'base', type: 'currency' },
            { key: 'note', type: 'text' },
          ],
        },
        { key: 'tags', name: 'Tags', type: 'list', parts: null },
        text('tenure', 'Tenure (years)'),
      ]);
      // A cycle without employees has no columns.
      expect(columns[CYCLE.offset]).toEqual([]);
    } finally {
      await database.drop();
    }
  });
});
