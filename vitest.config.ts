import { defineConfig } from 'vitest/config';
import { postgresAvailable } from './test/helpers/services/postgres.js';

// The suite runs once per database: SQLite always, PostgreSQL when the machine has it
// (CI installs it) or COMPPLAN_TEST_POSTGRES_URL names a server. One suite, two runs.
const withPostgres = Boolean(process.env.COMPPLAN_TEST_POSTGRES_URL) || postgresAvailable();

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
        test: { name: 'sqlite', include: ['test/**/*.test.ts'], provide: { dialect: 'sqlite' } },
      },
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                // What depends on the database; the CLI and unit tests run once.
                include: ['test/api/**/*.test.ts', 'test/import/**/*.test.ts'],
                provide: { dialect: 'postgres' as const },
              },
            },
          ]
        : []),
    ],
  },
});
