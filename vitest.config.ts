import { existsSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { postgresAvailable } from './test/helpers/services/postgres.js';
import { productionStackAvailable } from './test/helpers/services/stack.js';

// The suite runs once per database: SQLite always, PostgreSQL when the machine has it
// (CI installs it) or COMPPLAN_TEST_POSTGRES_URL names a server. One suite, two runs.
const withPostgres = Boolean(process.env.COMPPLAN_TEST_POSTGRES_URL) || postgresAvailable();
// The production topology (several instances, PostgreSQL, Redis, nginx; test/production)
// runs when all of it is installed (CI installs it); a machine without it skips the project.
const withProduction = productionStackAvailable();
// The web application's browser tests (test/web) drive Debian's Chromium (CI installs it).
const withChromium = existsSync('/usr/bin/chromium');

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['./test/global-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/production/**', 'test/web/**'],
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
                ],
                provide: { dialect: 'postgres' as const },
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
    ],
  },
});
