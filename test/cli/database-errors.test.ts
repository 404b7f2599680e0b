// A database that is locked, unreachable or cannot be written, and an import interrupted
// by a signal: each is one line on standard error (never a stack trace, never the
// password of DATABASE_URL) and exit code 1 — or 130 / 143 for SIGINT / SIGTERM — and
// leaves nothing changed and nothing created (README.md "Command line", docs/operations.md).
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acmeDataSet } from '../fixtures/data-sets.js';
import {
  type CliResult,
  cliEnvironment,
  dumpDatabase,
  REPO_ROOT,
  runAllCli,
  stopAllProcesses,
  stopProcess,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';
import { waitFor } from '../helpers/services/process.js';
import { importDataSet } from '../helpers/set-up.js';

const BIN = join(REPO_ROOT, 'bin', 'compplan.js');
const STACK_LINE = '    at ';
const BUSY =
  'compplan: the database is busy: another import or writer holds it (waited 5 s); nothing changed. Try again.\n';

/** Exactly one line on standard error, nothing on standard output, the exit code given. */
function expectOneLine(result: CliResult, line: string, code = 1): void {
  expect(result.stderr).not.toContain(STACK_LINE);
  expect(result).toEqual({ code, signal: null, stdout: '', stderr: `${line}\n` });
}

/**
 * `compplan ARGS…` with standard input left open for the test to write to (runCli closes
 * it), optionally as another user (root is not stopped by file permissions).
 */
function startCli(
  args: readonly string[],
  env: Record<string, string>,
  user?: { uid: number; gid: number },
) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    cwd: REPO_ROOT,
    env: cliEnvironment(env),
    stdio: ['pipe', 'pipe', 'pipe'],
    ...user,
  });
  child.stdin?.on('error', () => {});
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const result = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, result };
}

describe('compplan and a database that is locked, unreachable or cannot be written', () => {
  let db: TempDatabase;
  let acmeText: string;
  let acmeFile: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    db = tempDatabase();
    acmeText = JSON.stringify(acmeDataSet(), null, 2);
    acmeFile = db.writeFile('acme.json', acmeText);
    await importDataSet(db.url, acmeDataSet());
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => stopProcess(child)));
  });
  afterAll(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('a command that writes while another process holds the SQLite write lock waits 5 s, then says the database is busy (exit 1); nothing changed', async () => {
    const before = dumpDatabase(db.path);
    const holder = new SQLite(db.path);
    try {
      holder.exec('begin immediate');
      const started = Date.now();
      // Together, as they would meet a long import: each waits on its own.
      const results = await runAllCli(
        [
          ['import', acmeFile],
          ['orgs', 'set', 'acme', '--api-keys', 'disabled'],
          ['keys', 'create', '--org', 'acme'],
        ],
        { env: db.env, timeoutMs: 15_000 },
        3,
      );
      const elapsed = Date.now() - started;
      for (const result of results) expectOneLine(result, BUSY.trimEnd());
      // 5 s of waiting, plus the start of three processes on a machine of two cores.
      expect(elapsed).toBeGreaterThanOrEqual(4_900);
      expect(elapsed).toBeLessThan(9_000);
    } finally {
      holder.exec('rollback');
      holder.close();
    }
    expect(dumpDatabase(db.path)).toEqual(before);
  });

  it('PostgreSQL refusing connections: one line naming its address, never the password, exit 1, from every command', async () => {
    const env = { DATABASE_URL: 'postgres://compplan:s3cret-pw@127.0.0.1:1/compplan' };
    const line =
      'compplan: cannot connect to PostgreSQL at 127.0.0.1:1 (connection refused); check DATABASE_URL';
    const results = await runAllCli(
      [
        ['import', acmeFile],
        ['migrate'],
        ['keys', 'list', '--org', 'acme'],
        ['serve', '--port', '0', '--host', '127.0.0.1'],
      ],
      { env, timeoutMs: 10_000 },
    );
    for (const result of results) {
      expect(result.stderr).not.toContain('s3cret-pw');
      expectOneLine(result, line);
    }
  });

  it('a SQLite path under a regular file, a folder, or a file that is not a database: one line, exit 1, nothing created or changed', async () => {
    const file = db.writeFile('file.txt', 'not a database\n');
    const cases: [string, string][] = [
      [
        join(file, 'db.sqlite'),
        `compplan: cannot open the SQLite database ${file}/db.sqlite for writing (${file} is a file, not a folder)`,
      ],
      [
        join(file, 'a', 'b', 'db.sqlite'),
        `compplan: cannot open the SQLite database ${file}/a/b/db.sqlite for writing (${file} is a file, not a folder)`,
      ],
      [db.dir, `compplan: cannot open the SQLite database ${db.dir} for writing (it is a folder)`],
      [file, `compplan: ${file} is not a SQLite database; check DATABASE_URL`],
    ];
    const before = readdirSync(db.dir).sort();
    const results = await runAllCli(
      cases.map(() => ['import', acmeFile]),
      (index) => ({ env: { DATABASE_URL: `sqlite:${cases[index]?.[0]}` } }),
    );
    for (const [index, result] of results.entries()) expectOneLine(result, cases[index]?.[1] ?? '');
    expect(readdirSync(db.dir).sort()).toEqual(before);
    expect(readFileSync(file, 'utf8')).toBe('not a database\n');
  });

  // Root is not stopped by file permissions: as root, the commands run as nobody.
  it('a read-only folder or file: one line, exit 1, before the input has been read', async () => {
    const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
    const readOnlyFolder = join(db.dir, 'read-only');
    const writableFolder = join(db.dir, 'writable');
    mkdirSync(readOnlyFolder);
    mkdirSync(writableFolder);
    copyFileSync(db.path, join(readOnlyFolder, 'x.db'));
    copyFileSync(db.path, join(writableFolder, 'x.db'));
    chmodSync(db.dir, 0o755);
    chmodSync(acmeFile, 0o644);
    // Readable by the other user: compplan makes its databases 0600 (docs/operations.md).
    chmodSync(join(readOnlyFolder, 'x.db'), 0o644);
    chmodSync(readOnlyFolder, 0o555);
    chmodSync(writableFolder, 0o777);
    chmodSync(join(writableFolder, 'x.db'), 0o444);
    const cases: [string, string][] = [
      [join(readOnlyFolder, 'new.db'), 'permission denied'],
      [join(readOnlyFolder, 'a', 'b', 'new.db'), 'permission denied'],
      [join(readOnlyFolder, 'x.db'), `its folder ${readOnlyFolder} is read-only`],
      [join(writableFolder, 'x.db'), 'the file is read-only'],
    ];
    try {
      for (const [path, reason] of cases) {
        // Standard input gets the data set's first half and stays open: the command must
        // fail without waiting for the rest.
        const run = startCli(['import', '-'], { DATABASE_URL: `sqlite:${path}` }, user);
        children.push(run.child);
        run.child.stdin?.write(acmeText.slice(0, acmeText.length / 2));
        expectOneLine(
          await run.result,
          `compplan: cannot open the SQLite database ${path} for writing (${reason})`,
        );
      }
      expect(readdirSync(readOnlyFolder)).toEqual(['x.db']);
      expect(dumpDatabase(join(writableFolder, 'x.db'))).toEqual(dumpDatabase(db.path));
    } finally {
      chmodSync(readOnlyFolder, 0o755);
    }
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s during an import from a slow standard input into a new database: one line, exit %i, nothing left behind',
    async (signal, code) => {
      const folder = join(db.dir, `new-${signal}`);
      const path = join(folder, 'a', 'b', 'x.db');
      const run = startCli(['import', '-'], { DATABASE_URL: `sqlite:${path}` });
      children.push(run.child);
      run.child.stdin?.write(acmeText.slice(0, acmeText.length / 2));
      // The database has been made and the import waits inside its transaction for the rest.
      await waitFor(
        async () => existsSync(`${path}-wal`),
        10_000,
        'the import to open the database',
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      run.child.kill(signal);
      expectOneLine(await run.result, 'compplan: interrupted; nothing changed.', code);
      expect(existsSync(folder)).toBe(false);
    },
  );
});
