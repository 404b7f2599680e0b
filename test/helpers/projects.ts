// Which vitest projects this machine can run, and why not the others. vitest.config.ts
// builds its projects from `planProjects`, and the projects reporter
// (projects-reporter.ts) tells at the end of the run which ran and which were skipped for
// lack of what; under CI=true a skipped project fails the run, since CI installs
// everything and a project silently missing there would hide its failures.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { NGINX_BIN, nginxAvailable } from './services/nginx.js';
import { POSTGRES_BIN, postgresAvailable } from './services/postgres.js';

/** Debian's Chromium, which the browser tests (test/web) drive. */
export const CHROMIUM = '/usr/bin/chromium';
/** Debian's Python and its python3-pandas: the client of the interop tests (test/interop). */
export const PYTHON = '/usr/bin/python3';
export const PANDAS_PACKAGE = '/usr/lib/python3/dist-packages/pandas';

/** What the projects beyond `sqlite` need, as found on this machine. */
export interface Services {
  /** PostgreSQL 15's initdb and pg_ctl, or COMPPLAN_TEST_POSTGRES_URL. */
  postgres: boolean;
  /** redis-server on PATH. */
  redis: boolean;
  nginx: boolean;
  chromium: boolean;
  /** wrk on PATH: the load generator of npm run bench, whose scripts test/bench runs. */
  wrk: boolean;
  /** Debian's python3-pandas, which reads the bulk download in test/interop. */
  pandas: boolean;
  /** xmllint (Debian's libxml2-utils), which checks $metadata against OASIS's schemas in test/interop. */
  xmllint: boolean;
}

export type ProjectName =
  | 'sqlite'
  | 'postgres'
  | 'redis'
  | 'production'
  | 'web'
  | 'bench'
  | 'interop';

export interface ProjectPlan {
  name: ProjectName;
  /** What the machine lacks for this project; empty: it runs. */
  missing: string[];
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .some((dir) => dir.length > 0 && existsSync(join(dir, command)));
}

export function detectServices(): Services {
  return {
    postgres: Boolean(process.env.COMPPLAN_TEST_POSTGRES_URL) || postgresAvailable(),
    redis: onPath('redis-server'),
    nginx: nginxAvailable(),
    chromium: existsSync(CHROMIUM),
    wrk: onPath('wrk'),
    pandas: existsSync(PYTHON) && existsSync(PANDAS_PACKAGE),
    xmllint: onPath('xmllint'),
  };
}

const LACKING = {
  postgres: `PostgreSQL (${POSTGRES_BIN}/initdb and pg_ctl, or COMPPLAN_TEST_POSTGRES_URL)`,
  redis: 'redis-server (on PATH)',
  nginx: `nginx (${NGINX_BIN})`,
  chromium: `Chromium (${CHROMIUM})`,
  wrk: 'wrk (on PATH)',
  pandas: `pandas (Debian's python3-pandas, ${PANDAS_PACKAGE})`,
  xmllint: "xmllint (Debian's libxml2-utils, on PATH)",
} as const satisfies Record<keyof Services, string>;

/**
 * What each project needs, in the order the run lists them: `sqlite` nothing; `redis` (the
 * tests of the quota kept in Redis, test/redis) redis-server; the production topology
 * (several instances on PostgreSQL, Redis, nginx) all three.
 */
export const PROJECT_NEEDS: Readonly<Record<ProjectName, readonly (keyof Services)[]>> = {
  sqlite: [],
  postgres: ['postgres'],
  redis: ['redis'],
  production: ['postgres', 'redis', 'nginx'],
  web: ['chromium'],
  bench: ['wrk'],
  // Clients nobody here wrote, reading the API as their users do.
  interop: ['pandas', 'xmllint'],
};

/** Each project and what it lacks of what it needs (PROJECT_NEEDS). */
export function planProjects(services: Services): ProjectPlan[] {
  return Object.entries(PROJECT_NEEDS).map(([name, needs]) => ({
    name: name as ProjectName,
    missing: needs.filter((need) => !services[need]).map((need) => LACKING[need]),
  }));
}

/**
 * The lines that close a run: the projects that ran (`ran`: those with a test module in
 * it), those skipped and for lack of what, those the run's filters left out; `failed` when
 * `ci` and any was skipped for lack of something.
 */
export function projectsSummary(
  plans: readonly ProjectPlan[],
  ran: readonly string[],
  ci: boolean,
): { lines: string[]; failed: boolean } {
  const skipped = plans.filter((plan) => plan.missing.length > 0);
  const unselected = plans.filter((plan) => plan.missing.length === 0 && !ran.includes(plan.name));
  const lines = [`Test projects run: ${ran.length > 0 ? ran.join(', ') : 'none'}`];
  for (const plan of skipped) {
    lines.push(`Test project skipped: ${plan.name}, for lack of ${plan.missing.join(', ')}`);
  }
  if (unselected.length > 0) {
    lines.push(
      `Test projects not run (no test of theirs selected): ${unselected.map((plan) => plan.name).join(', ')}`,
    );
  }
  const failed = ci && skipped.length > 0;
  if (failed) {
    lines.push(
      `CI=true: every test project must run, and ${skipped.map((plan) => plan.name).join(', ')} did not: install what it lacks (.ci/run installs it all).`,
    );
  }
  return { lines, failed };
}
