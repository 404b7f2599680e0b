// Which vitest projects run on a machine, and the lines that close `npm test` saying so
// (test/helpers/projects.ts).
import { describe, expect, it } from 'vitest';
import { planProjects, projectsSummary, type Services } from '../helpers/projects.js';
import { NGINX_BIN } from '../helpers/services/nginx.js';
import { POSTGRES_BIN } from '../helpers/services/postgres.js';

const everything: Services = {
  postgres: true,
  redis: true,
  nginx: true,
  chromium: true,
  wrk: true,
  pandas: true,
  xmllint: true,
};
const nothing: Services = {
  postgres: false,
  redis: false,
  nginx: false,
  chromium: false,
  wrk: false,
  pandas: false,
  xmllint: false,
};
const POSTGRES = `PostgreSQL (${POSTGRES_BIN}/initdb and pg_ctl, or COMPPLAN_TEST_POSTGRES_URL)`;
const NGINX = `nginx (${NGINX_BIN})`;
const PANDAS = "pandas (Debian's python3-pandas, /usr/lib/python3/dist-packages/pandas)";
const XMLLINT = "xmllint (Debian's libxml2-utils, on PATH)";

describe('the test projects a machine runs', () => {
  it('are all seven when PostgreSQL, Redis, nginx, Chromium, wrk, pandas and xmllint are there', () => {
    expect(planProjects(everything)).toEqual([
      { name: 'sqlite', missing: [] },
      { name: 'postgres', missing: [] },
      { name: 'redis', missing: [] },
      { name: 'production', missing: [] },
      { name: 'web', missing: [] },
      { name: 'bench', missing: [] },
      { name: 'interop', missing: [] },
    ]);
  });

  it('are sqlite alone on a bare machine, each other one naming all it lacks', () => {
    expect(planProjects(nothing)).toEqual([
      { name: 'sqlite', missing: [] },
      { name: 'postgres', missing: [POSTGRES] },
      { name: 'redis', missing: ['redis-server (on PATH)'] },
      {
        name: 'production',
        missing: [POSTGRES, 'redis-server (on PATH)', NGINX],
      },
      { name: 'web', missing: ['Chromium (/usr/bin/chromium)'] },
      { name: 'bench', missing: ['wrk (on PATH)'] },
      { name: 'interop', missing: [PANDAS, XMLLINT] },
    ]);
  });

  it('leave out redis and production when only Redis is missing', () => {
    expect(planProjects({ ...everything, redis: false })).toEqual([
      { name: 'sqlite', missing: [] },
      { name: 'postgres', missing: [] },
      { name: 'redis', missing: ['redis-server (on PATH)'] },
      { name: 'production', missing: ['redis-server (on PATH)'] },
      { name: 'web', missing: [] },
      { name: 'bench', missing: [] },
      { name: 'interop', missing: [] },
    ]);
  });
});

describe('the lines that close a run', () => {
  it('list the projects run and nothing else when none was skipped, and pass under CI', () => {
    const plans = planProjects(everything);
    const all = ['sqlite', 'postgres', 'redis', 'production', 'web', 'bench', 'interop'];
    expect(projectsSummary(plans, all, true)).toEqual({
      lines: ['Test projects run: sqlite, postgres, redis, production, web, bench, interop'],
      failed: false,
    });
  });

  it('name each skipped project and what it lacks; outside CI the run still passes', () => {
    const plans = planProjects({ ...everything, nginx: false, chromium: false });
    const ran = ['sqlite', 'postgres', 'redis', 'bench', 'interop'];
    expect(projectsSummary(plans, ran, false)).toEqual({
      lines: [
        'Test projects run: sqlite, postgres, redis, bench, interop',
        `Test project skipped: production, for lack of ${NGINX}`,
        'Test project skipped: web, for lack of Chromium (/usr/bin/chromium)',
      ],
      failed: false,
    });
  });

  it('fail the run under CI when a project was skipped, saying which', () => {
    const plans = planProjects({ ...everything, chromium: false });
    const ran = ['sqlite', 'postgres', 'redis', 'production', 'bench', 'interop'];
    expect(projectsSummary(plans, ran, true)).toEqual({
      lines: [
        'Test projects run: sqlite, postgres, redis, production, bench, interop',
        'Test project skipped: web, for lack of Chromium (/usr/bin/chromium)',
        'CI=true: every test project must run, and web did not: install what it lacks (.ci/run installs it all).',
      ],
      failed: true,
    });
  });

  it('tell a project the run filtered out from one skipped for lack of a service; only the latter fails CI', () => {
    const plans = planProjects(everything);
    expect(projectsSummary(plans, ['sqlite'], true)).toEqual({
      lines: [
        'Test projects run: sqlite',
        'Test projects not run (no test of theirs selected): postgres, redis, production, web, bench, interop',
      ],
      failed: false,
    });
  });
});
