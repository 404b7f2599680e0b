// The address commands print or call (src/cli/server-address.ts): --base-url, else
// COMPPLAN_BASE_URL, else the server `compplan serve` would start with the same PORT and
// HOST; always printed with where it came from, and always the one actually used.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CliResult,
  type CliServer,
  runCli,
  runCliMeanwhile,
  startCliServer,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';

/** The sign-in address `users create` prints, and the line that says where it came from. */
function signInAddress(stdout: string): { url: string | undefined; source: string | undefined } {
  const url = /they sign in at\n\n {2}(\S+)\n\nand then choose their own password\.\n/.exec(
    stdout,
  )?.[1];
  const source =
    /^The address comes from (.+); for another server, pass --base-url or set COMPPLAN_BASE_URL\.$/m.exec(
      stdout,
    )?.[1];
  return { url, source };
}

describe('the server address commands print and use', () => {
  let db: TempDatabase;
  let server: CliServer;
  let port = '';
  let demoKey = '';
  /**
   * Exports to port 9, where nobody listens: each waits out the client's retries of the
   * connection (about 4 s, up to 7.5 s), so they start in beforeAll and wait side by side
   * while the other tests run; the test that is about them awaits them.
   */
  let unreachable: { derived: Promise<CliResult>; variable: Promise<CliResult> };

  beforeAll(async () => {
    db = tempDatabase();
    server = await startCliServer(['--demo'], db.env);
    port = new URL(server.url).port;
    demoKey = /^ {2}(cpk_\S+)$/m.exec(server.stderr())?.[1] ?? '';
    expect(demoKey).not.toBe('');
    unreachable = {
      derived: runCliMeanwhile(['export', 'merit-cycles'], {
        env: {
          PORT: '9',
          HOST: '127.0.0.1',
          COMPPLAN_BASE_URL: undefined,
          COMPPLAN_API_KEY: demoKey,
        },
        timeoutMs: 60_000,
      }),
      variable: runCliMeanwhile(['export', 'merit-cycles'], {
        env: { COMPPLAN_BASE_URL: 'http://127.0.0.1:9', COMPPLAN_API_KEY: demoKey },
        timeoutMs: 60_000,
      }),
    };
  });
  afterAll(async () => {
    if (unreachable) await Promise.allSettled(Object.values(unreachable));
    await server.stop();
    await stopAllProcesses();
    db.remove();
  });

  it('users create prints the sign-in address of the server PORT and HOST start, saying so, and that address serves the sign-in page', async () => {
    const result = await runCli(
      ['users', 'create', '--org', 'demo', '--email', 'port@demo.example', '--role', 'owner'],
      { env: { ...db.env, PORT: port, HOST: '127.0.0.1', COMPPLAN_BASE_URL: undefined } },
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(signInAddress(result.stdout)).toEqual({
      url: `http://127.0.0.1:${port}/app/sign-in`,
      source: `PORT=${port} and HOST=127.0.0.1`,
    });
    const page = await fetch(`http://127.0.0.1:${port}/app/sign-in`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('users create: COMPPLAN_BASE_URL over PORT and HOST, --base-url over both; without any, the default of serve', async () => {
    const cases: [string[], Record<string, string | undefined>, string, string][] = [
      [
        [],
        { COMPPLAN_BASE_URL: 'https://compplan.example.com/', PORT: '8123' },
        'https://compplan.example.com/app/sign-in',
        'COMPPLAN_BASE_URL',
      ],
      [
        ['--base-url', 'http://10.1.2.3:8080'],
        { COMPPLAN_BASE_URL: 'https://compplan.example.com', PORT: '8123' },
        'http://10.1.2.3:8080/app/sign-in',
        '--base-url',
      ],
      [
        [],
        { COMPPLAN_BASE_URL: undefined, PORT: '8123' },
        'http://127.0.0.1:8123/app/sign-in',
        'PORT=8123',
      ],
      [
        [],
        { COMPPLAN_BASE_URL: undefined },
        'http://127.0.0.1:3000/app/sign-in',
        'the defaults of compplan serve: PORT and HOST unset',
      ],
    ];
    for (const [index, [flags, env, url, source]] of cases.entries()) {
      const result = await runCli(
        [
          'users',
          'create',
          '--org',
          'demo',
          '--email',
          `case${index}@demo.example`,
          '--role',
          'admin',
          ...flags,
        ],
        { env: { ...db.env, ...env } },
      );
      expect({ index, code: result.code, ...signInAddress(result.stdout) }).toEqual({
        index,
        code: 0,
        url,
        source,
      });
    }
  });

  it('a --base-url or COMPPLAN_BASE_URL that is not an http(s) URL is a usage error (exit 2) and creates no user', async () => {
    const flag = await runCli(
      [
        'users',
        'create',
        '--org',
        'demo',
        '--email',
        'bad@demo.example',
        '--role',
        'admin',
        '--base-url',
        'localhost:3000',
      ],
      { env: db.env },
    );
    expect(flag).toEqual({
      code: 2,
      signal: null,
      stdout: '',
      stderr: 'compplan: --base-url must be an http(s) URL, got "localhost:3000"\n',
    });
    const variable = await runCli(
      ['users', 'create', '--org', 'demo', '--email', 'bad@demo.example', '--role', 'admin'],
      { env: { ...db.env, COMPPLAN_BASE_URL: 'ftp://x' } },
    );
    expect(variable.stderr).toBe(
      'compplan: COMPPLAN_BASE_URL must be an http(s) URL, got "ftp://x"\n',
    );
    expect(variable.code).toBe(2);
    // Neither created the user: a third call with a good address can.
    const good = await runCli(
      ['users', 'create', '--org', 'demo', '--email', 'bad@demo.example', '--role', 'admin'],
      { env: db.env },
    );
    expect(good.code).toBe(0);
  });

  it('keys create prints a curl line for the server PORT and HOST name, saying so, and that line works as printed', async () => {
    const result = await runCli(['keys', 'create', '--org', 'demo'], {
      env: { ...db.env, PORT: port, HOST: '127.0.0.1', COMPPLAN_BASE_URL: undefined },
    });
    expect(result.code).toBe(0);
    const [, key = '', url = ''] =
      /^Try it: curl -H "x-api-key: (cpk_\S+)" (\S+)$/m.exec(result.stdout) ?? [];
    expect(url).toBe(`http://127.0.0.1:${port}/ping`);
    expect(result.stdout).toContain(
      `(the address comes from PORT=${port} and HOST=127.0.0.1; for another server, pass --base-url or set COMPPLAN_BASE_URL)`,
    );
    const response = await fetch(url, { headers: { 'x-api-key': key } });
    expect(response.status).toBe(200);
  });

  it('export without --base-url or COMPPLAN_BASE_URL reads the server PORT and HOST name, and says so with --progress', async () => {
    const result = await runCli(['export', 'merit-cycles', '--format', 'json', '--progress'], {
      env: {
        PORT: port,
        HOST: '127.0.0.1',
        COMPPLAN_BASE_URL: undefined,
        COMPPLAN_API_KEY: demoKey,
      },
    });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as unknown[]).length).toBeGreaterThan(0);
    expect(result.stderr.split('\n')[0]).toBe(
      `Exporting from http://127.0.0.1:${port} (from PORT=${port} and HOST=127.0.0.1)`,
    );
  });

  it('export with a key the server does not know (401), or a cycle it does not have (404), names the server it asked and where that address came from', async () => {
    // A key of some other server, while this one answers on the address PORT and HOST name.
    const otherKey = `cpk_${'A'.repeat(42)}`;
    const derived = await runCli(['export', 'merit-cycles'], {
      env: {
        PORT: port,
        HOST: '127.0.0.1',
        COMPPLAN_BASE_URL: undefined,
        COMPPLAN_API_KEY: otherKey,
      },
    });
    expect(derived.code).toBe(1);
    expect(derived.stderr).toMatch(
      new RegExp(
        `^compplan: GET /v1/compensationPlanning/meritCycles: 401 Missing or invalid API key \\(request id [\\w-]+\\) \\(check --key or COMPPLAN_API_KEY; is http://127\\.0\\.0\\.1:${port} \\(from PORT=${port} and HOST=127\\.0\\.0\\.1\\) the server you mean\\? name it with --base-url or COMPPLAN_BASE_URL\\)\n$`,
      ),
    );
    const unknownCycle = 'mc_00000000-0000-4000-8000-000000000000';
    const named = await runCli(['export', 'employees', '--cycle', unknownCycle], {
      env: { COMPPLAN_BASE_URL: server.url, COMPPLAN_API_KEY: demoKey },
    });
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(
      new RegExp(
        `: 404 Merit cycle not found \\(request id [\\w-]+\\) \\(check --cycle; is http://127\\.0\\.0\\.1:${port} the right COMPPLAN_BASE_URL\\?\\)\n$`,
      ),
    );
  });

  it('export to a server nobody listens at names the address, where it came from and how to name another', async () => {
    const derived = await unreachable.derived;
    expect(derived.code).toBe(1);
    expect(derived.stderr).toMatch(
      /^compplan: GET \/v1\/compensationPlanning\/meritCycles: could not reach http:\/\/127\.0\.0\.1:9: .+ \(is http:\/\/127\.0\.0\.1:9 \(from PORT=9 and HOST=127\.0\.0\.1\) the server you mean\? name it with --base-url or COMPPLAN_BASE_URL\)\n$/,
    );
    const variable = await unreachable.variable;
    expect(variable.code).toBe(1);
    expect(variable.stderr).toMatch(
      /\(is http:\/\/127\.0\.0\.1:9 the right COMPPLAN_BASE_URL\?\)\n$/,
    );
  }, 60_000);
});
