// `npm test`'s closing lines, from a real vitest run of one small test file on a machine
// made to lack PostgreSQL, Redis, nginx, wrk and xmllint (their paths pointed at nothing): the projects
// run and skipped are listed, and under CI=true the run fails for the skipped ones.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { CHROMIUM, PANDAS_PACKAGE, PYTHON } from '../helpers/projects.js';

const VITEST = join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const emptyDir = mkdtempSync(join(tmpdir(), 'compplan-empty-path-'));
afterAll(() => rmSync(emptyDir, { recursive: true, force: true }));

function vitest(ci: boolean) {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    // The outer run's own variables (VITEST_*, the CI flag) stay out of the inner one.
    if (!name.startsWith('VITEST') && name !== 'CI' && name !== 'NODE_OPTIONS') env[name] = value;
  }
  Object.assign(env, {
    // An empty directory as PATH: no redis-server, wrk or xmllint (node is run by its path).
    PATH: emptyDir,
    COMPPLAN_PG_BIN: join(REPO_ROOT, 'no-such-postgres'),
    COMPPLAN_NGINX_BIN: join(REPO_ROOT, 'no-such-nginx'),
    ...(ci ? { CI: 'true' } : {}),
  });
  delete env.COMPPLAN_TEST_POSTGRES_URL;
  delete env.COMPPLAN_TEST_REDIS_URL;
  return new Promise<{ code: number | null; stdout: string }>((resolve) => {
    execFile(
      process.execPath,
      [VITEST, 'run', '--project', 'sqlite', 'test/unit/test-projects.test.ts'],
      { cwd: REPO_ROOT, env, timeout: 60_000 },
      (error, stdout) => resolve({ code: error ? (error.code as number | null) : 0, stdout }),
    );
  });
}

const skipped = [
  `Test project skipped: postgres, for lack of PostgreSQL (${join(REPO_ROOT, 'no-such-postgres')}/initdb and pg_ctl, or COMPPLAN_TEST_POSTGRES_URL)`,
  'Test project skipped: redis, for lack of redis-server (on PATH)',
  `Test project skipped: production, for lack of PostgreSQL (${join(REPO_ROOT, 'no-such-postgres')}/initdb and pg_ctl, or COMPPLAN_TEST_POSTGRES_URL), redis-server (on PATH), nginx (${join(REPO_ROOT, 'no-such-nginx')})`,
  'Test project skipped: bench, for lack of wrk (on PATH)',
  `Test project skipped: interop, for lack of ${[
    ...(existsSync(PYTHON) && existsSync(PANDAS_PACKAGE)
      ? []
      : [`pandas (Debian's python3-pandas, ${PANDAS_PACKAGE})`]),
    "xmllint (Debian's libxml2-utils, on PATH)",
  ].join(', ')}`,
];

describe("npm test's closing lines", () => {
  it('list the projects run and those skipped for lack of what; the run passes outside CI', async () => {
    const { code, stdout } = await vitest(false);
    expect(stdout).toContain('Test projects run: sqlite\n');
    for (const line of skipped) expect(stdout).toContain(`${line}\n`);
    expect(stdout).not.toContain('CI=true');
    expect(code).toBe(0);
  });

  it('fail the run under CI=true, naming the projects skipped', async () => {
    const { code, stdout } = await vitest(true);
    for (const line of skipped) expect(stdout).toContain(`${line}\n`);
    const missing = existsSync(CHROMIUM)
      ? 'postgres, redis, production, bench, interop'
      : 'postgres, redis, production, web, bench, interop';
    expect(stdout).toContain(
      `CI=true: every test project must run, and ${missing} did not: install what it lacks (.ci/run installs it all).\n`,
    );
    expect(code).toBe(1);
  });
});
