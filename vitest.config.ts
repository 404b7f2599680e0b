import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { detectServices, type ProjectName, planProjects } from './test/helpers/projects.js';

// The suite runs once per database: SQLite always, PostgreSQL when the machine has it
// (CI installs it) or COMPPLAN_TEST_POSTGRES_URL names a server. One suite, two runs.
// The tests that need Redis (test/redis), the production topology (several instances,
// PostgreSQL, Redis, nginx; test/production), the web application's browser tests
// (test/web, Debian's Chromium), the benchmark's wrk scripts (test/bench) and pandas
// reading the bulk download (test/interop) run when what they need is installed (CI
// installs it all; test/helpers/projects.ts). The run ends by listing the projects skipped
// and for lack of what (test/helpers/projects-reporter.ts); under CI=true a skipped project
// fails it.
const runs = new Set<ProjectName>(
  planProjects(detectServices())
    .filter((plan) => plan.missing.length === 0)
    .map((plan) => plan.name),
);
const withPostgres = runs.has('postgres');
const withRedis = runs.has('redis');
const withProduction = runs.has('production');
const withChromium = runs.has('web');
const withWrk = runs.has('bench');
const withPandas = runs.has('interop');

// Test files at once. Most of a test waits (on spawned commands, servers, databases,
// receivers), so vitest's default of one fewer than the cores, a single file at a time on
// two, leaves a core idle: two at least.
const FILES_AT_ONCE = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: FILES_AT_ONCE,
    // A worker process runs its files one after another with the modules it has loaded:
    // loading the app's modules afresh for each of ~190 files took about 170 s of the
    // suite's 550. Every test builds its own servers, databases and temp folders, and
    // restores what it changes of the process (TMPDIR in test/webapp/data-upload.test.ts).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['./test/global-setup.ts'],
    reporters: [
      'default',
      './test/helpers/projects-reporter.ts',
      './test/helpers/summary-reporter.ts',
    ],
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [
            ...configDefaults.exclude,
            'test/redis/**',
            'test/production/**',
            'test/web/**',
            'test/bench/**',
            'test/interop/**',
          ],
          provide: { dialect: 'sqlite' },
        },
      },
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                // What depends on the database; the CLI and unit tests run once.
                include: [
                  'test/api/**/*.test.ts',
                  'test/import/**/*.test.ts',
                  'test/webapp/**/*.test.ts',
                  'test/db/**/*.test.ts',
                  'test/webhooks/**/*.test.ts',
                  'test/audit/**/*.test.ts',
                ],
                provide: { dialect: 'postgres' as const },
              },
            },
          ]
        : []),
      ...(withRedis
        ? [
            {
              extends: true as const,
              test: {
                name: 'redis',
                // The quota in Redis; what it counts does not depend on the database.
                include: ['test/redis/**/*.test.ts'],
                provide: { dialect: 'sqlite' as const },
              },
            },
          ]
        : []),
      ...(withProduction
        ? [
            {
              extends: true as const,
              test: {
                name: 'production',
                include: ['test/production/**/*.test.ts'],
                provide: { dialect: 'postgres' as const },
                // Last, one file at a time: three instances, nginx and PostgreSQL clusters
                // stopped and started under load, with answers timed against their
                // bounds, are not shared with other files' work.
                maxWorkers: 1,
                sequence: { groupOrder: 1 },
              },
            },
          ]
        : []),
      ...(withChromium
        ? [
            {
              extends: true as const,
              test: {
                name: 'web',
                include: ['test/web/**/*.test.ts'],
                provide: { dialect: 'sqlite' as const },
              },
            },
          ]
        : []),
      ...(withWrk
        ? [
            {
              extends: true as const,
              test: {
                name: 'bench',
                include: ['test/bench/**/*.test.ts'],
                provide: { dialect: 'sqlite' as const },
              },
            },
          ]
        : []),
      ...(withPandas
        ? [
            {
              extends: true as const,
              test: {
                name: 'interop',
                include: ['test/interop/**/*.test.ts'],
                provide: { dialect: 'sqlite' as const },
              },
            },
          ]
        : []),
    ],
  },
});
