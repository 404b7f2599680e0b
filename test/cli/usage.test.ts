// Configuration and usage errors of the command line (README.md): a bad
// setting stops start-up with exit 2 and one line naming it; a wrong call exits 2; --help
// works everywhere.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  REPO_ROOT,
  runAllCli,
  runCli,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';

describe('compplan configuration and usage', () => {
  // A database path of its own for each test, which none of them may create.
  let db: TempDatabase;
  beforeEach(() => {
    db = tempDatabase();
  });
  afterEach(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('a bad PORT, DATABASE_URL, RATE_LIMIT_PER_SECOND or LOG_LEVEL stops serve with exit 2 and one line naming the variable', {
    timeout: 60_000,
  }, async () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: 'abc' }, 'PORT must be a whole number from 0 to 65535 (got "abc")'],
      [
        // A URL with a password: refused without echoing it.
        { DATABASE_URL: 'mysql://admin:hunter2@db.example/compplan' },
        'DATABASE_URL must be sqlite:PATH or postgres://user:password@host:port/database',
      ],
      [{ RATE_LIMIT_PER_SECOND: '0' }, 'RATE_LIMIT_PER_SECOND must be from 1 to 1000000 (got "0")'],
      [
        { RATE_LIMIT_PER_SECOND: 'abc' },
        'RATE_LIMIT_PER_SECOND must be a whole number from 1 to 1000000 (got "abc")',
      ],
      [
        { LOG_LEVEL: 'loud' },
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      ],
    ];
    // --port would override PORT; otherwise loopback and any free port, in case a bad
    // value were wrongly accepted.
    const flags = (env: Record<string, string>) => [
      '--host',
      '127.0.0.1',
      ...('PORT' in env ? [] : ['--port', '0']),
    ];
    const results = await runAllCli(
      cases.map(([env]) => ['serve', ...flags(env)]),
      (index) => ({ env: { ...db.env, ...cases[index]?.[0] }, timeoutMs: 10_000 }),
    );
    results.forEach((result, index) => {
      const [env, message] = cases[index] ?? [{}, ''];
      expect({ env, ...result }).toEqual({
        env,
        code: 2,
        signal: null,
        stdout: '',
        stderr: `compplan: ${message}\n`,
      });
    });
    // Stopped before anything was opened.
    expect(existsSync(db.path)).toBe(false);
  });

  it('a bad --port flag is refused with exit 2, naming the flag', async () => {
    const result = await runCli(['serve', '--host', '127.0.0.1', '--port', '65536'], {
      env: db.env,
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe(
      "error: option '--port <n>' argument '65536' is invalid. must be a whole number from 0 to 65535",
    );
    expect(existsSync(db.path)).toBe(false);
  });

  it('an unknown command or a missing argument exits 2 before touching the database', async () => {
    const calls: [string[], string][] = [
      [['bogus'], "error: unknown command 'bogus'"],
      [['import'], "error: missing required argument 'file'"],
      [['keys', 'create'], "error: required option '--org <slug>' not specified"],
    ];
    const results = await runAllCli(
      calls.map(([args]) => args),
      { env: db.env },
    );
    results.forEach((result, index) => {
      const [args, firstLine] = calls[index] ?? [[], ''];
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({
        args,
        code: 2,
        stdout: '',
      });
      expect(result.stderr.split('\n')[0]).toBe(firstLine);
    });
    expect(existsSync(db.path)).toBe(false);
  });

  it('--help works on every command: usage on standard output, exit 0', {
    timeout: 60_000,
  }, async () => {
    const commands = [
      [],
      ['serve'],
      ['migrate'],
      ['import'],
      ['demo'],
      ['orgs'],
      ['orgs', 'list'],
      ['orgs', 'set'],
      ['keys'],
      ['keys', 'create'],
      ['keys', 'list'],
      ['keys', 'revoke'],
    ];
    const results = await runAllCli(
      commands.map((command) => [...command, '--help']),
      { env: db.env },
    );
    results.forEach((result, index) => {
      const command = commands[index] ?? [];
      expect({ command, code: result.code, stderr: result.stderr }).toEqual({
        command,
        code: 0,
        stderr: '',
      });
      expect(result.stdout.startsWith(`Usage: ${['compplan', ...command].join(' ')} `)).toBe(true);
    });
    const serveHelp = results[1]?.stdout ?? '';
    for (const flag of ['--port <n>', '--host <address>', '--demo']) {
      expect(serveHelp).toContain(flag);
    }
    expect(results[3]?.stdout).toContain('--prune');
    expect(results[9]?.stdout).toContain('--json');
    expect(existsSync(db.path)).toBe(false);
  });

  it('--version and -V print the version of package.json on standard output, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    const results = await runAllCli([['--version'], ['-V']], { env: db.env });
    for (const result of results) {
      expect(result).toEqual({ code: 0, signal: null, stdout: `${version}\n`, stderr: '' });
    }
    expect(existsSync(db.path)).toBe(false);
  });
});
