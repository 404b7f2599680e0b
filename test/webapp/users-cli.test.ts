// `compplan users create` (the compiled CLI) against the suite's database of the dialect
// under test: it prints a one-time password once and stores only its scrypt hash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { importDataSet } from '../../src/import/load.js';
import { verifyPassword } from '../../src/users/password.js';
import { runCli, stopAllProcesses } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { webDataSet } from '../helpers/web-client.js';

const USER_ID = /^user_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ONE_TIME = /^[a-z2-9]{5}-[a-z2-9]{5}-[a-z2-9]{5}-[a-z2-9]{5}$/;
const HASH = /^\$scrypt\$v=1\$n=32768,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;

function databaseUrl(config: DatabaseConfig): string {
  return config.dialect === 'sqlite' ? `sqlite:${config.path}` : config.url;
}

describe('compplan users create', () => {
  let database: TestDatabase;
  let env: Record<string, string>;

  const storedUsers = async () => {
    const handle = openDatabase(database.config);
    try {
      return await handle.db
        .selectFrom('users')
        .select(['email', 'email_key', 'role', 'password_hash', 'must_change_password'])
        .orderBy('email_key')
        .execute();
    } finally {
      await handle.close();
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    env = { DATABASE_URL: databaseUrl(database.config), LOG_LEVEL: 'warn' };
    const handle = openDatabase(database.config);
    try {
      await migrateToLatest(handle);
      await importDataSet(handle, webDataSet('initech'));
    } finally {
      await handle.close();
    }
  });
  afterAll(async () => {
    await stopAllProcesses();
    await database.drop();
  });

  it('prints the one-time password once, stores only its salted scrypt hash, and marks it to be changed', async () => {
    const result = await runCli(
      [
        'users',
        'create',
        '--org',
        'initech',
        '--email',
        'Olivia@Initech.example',
        '--role',
        'owner',
      ],
      { env },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const match =
      /^Created owner Olivia@Initech\.example \((user_\S+)\) for initech\.\n\nOne-time password:\n\n {2}(\S+)\n\nIt is shown only this once\./.exec(
        result.stdout,
      );
    const [, id = '', oneTimePassword = ''] = match ?? [];
    expect(id).toMatch(USER_ID);
    expect(oneTimePassword).toMatch(ONE_TIME);
    expect(result.stdout.split(oneTimePassword)).toHaveLength(2);

    const [stored] = await storedUsers();
    expect(stored).toMatchObject({
      email: 'Olivia@Initech.example',
      email_key: 'olivia@initech.example',
      role: 'owner',
    });
    expect([true, 1]).toContain(stored?.must_change_password);
    expect(stored?.password_hash).toMatch(HASH);
    expect(stored?.password_hash).not.toContain(oneTimePassword);
    expect(await verifyPassword(oneTimePassword, stored?.password_hash ?? '')).toBe(true);
  });

  it('--json prints one object {id,org,email,role,oneTimePassword,createdAt}', async () => {
    const result = await runCli(
      [
        'users',
        'create',
        '--org',
        'initech',
        '--email',
        'adam@initech.example',
        '--role',
        'admin',
        '--json',
      ],
      { env },
    );
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as Record<string, string>;
    expect(Object.keys(created)).toEqual([
      'id',
      'org',
      'email',
      'role',
      'oneTimePassword',
      'createdAt',
    ]);
    expect(created).toEqual({
      id: expect.stringMatching(USER_ID),
      org: 'initech',
      email: 'adam@initech.example',
      role: 'admin',
      oneTimePassword: expect.stringMatching(ONE_TIME),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('refuses, with exit 1 and one line, an email in use (in any case), an unknown organisation, a bad or too long email', async () => {
    const cases: [string[], string][] = [
      [
        ['--org', 'initech', '--email', 'OLIVIA@initech.example', '--role', 'admin'],
        'compplan: A user with the email OLIVIA@initech.example exists already\n',
      ],
      [
        ['--org', 'nope', '--email', 'x@nope.example', '--role', 'owner'],
        'compplan: No organisation with slug "nope"\n',
      ],
      [
        ['--org', 'initech', '--email', 'not-an-email', '--role', 'owner'],
        'compplan: "not-an-email" is not an email address\n',
      ],
      // Over 254 characters: on PostgreSQL its unique index would refuse it otherwise,
      // with an index error and a stack trace.
      [
        ['--org', 'initech', '--email', `${'a'.repeat(250)}@initech.example`, '--role', 'owner'],
        `compplan: "${'a'.repeat(57)}…" has more than 254 characters, the most an email address may have\n`,
      ],
    ];
    for (const [args, stderr] of cases) {
      const result = await runCli(['users', 'create', ...args], { env });
      expect(result).toEqual({ code: 1, signal: null, stdout: '', stderr });
    }
    expect(await storedUsers()).toHaveLength(2);
  });

  it('refuses a role other than owner or admin with exit 2', async () => {
    const result = await runCli(
      ['users', 'create', '--org', 'initech', '--email', 'e@initech.example', '--role', 'boss'],
      { env },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "error: option '--role <role>' argument 'boss' is invalid. Allowed choices are owner, admin.",
    );
  });

  it('users list prints a table, and with --json one object a user; users remove removes one, never the last owner', async () => {
    const table = await runCli(['users', 'list', '--org', 'initech'], { env });
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +EMAIL +ROLE +LAST SIGN-IN +CREATED$/);
    expect(table.stdout).toMatch(/adam@initech\.example +admin +never \(one-time password\)/);
    const json = await runCli(['users', 'list', '--org', 'initech', '--json'], { env });
    const listed = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(listed.map((user) => [user.email, user.role, user.lastSignedInAt])).toEqual([
      ['adam@initech.example', 'admin', null],
      ['Olivia@Initech.example', 'owner', null],
    ]);
    expect(Object.keys(listed[0] ?? {})).toEqual([
      'id',
      'email',
      'role',
      'lastSignedInAt',
      'mustChangePassword',
      'createdAt',
    ]);

    const last = await runCli(
      ['users', 'remove', '--org', 'initech', '--email', 'olivia@initech.example'],
      { env },
    );
    expect(last).toEqual({
      code: 1,
      signal: null,
      stdout: '',
      stderr: 'compplan: The last owner cannot be removed: make another user an owner first.\n',
    });
    const unknown = await runCli(
      ['users', 'remove', '--org', 'initech', '--email', 'nobody@initech.example'],
      { env },
    );
    expect(unknown.stderr).toBe(
      'compplan: No user with the email nobody@initech.example in this organisation\n',
    );
    const removed = await runCli(
      ['users', 'remove', '--org', 'initech', '--email', 'ADAM@initech.example'],
      { env },
    );
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(
      /^Removed adam@initech\.example \(user_\S+\) of initech; their sessions have ended\.\n$/,
    );
    expect((await storedUsers()).map((user) => user.email)).toEqual(['Olivia@Initech.example']);
  });
});
