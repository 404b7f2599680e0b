// Set-up done in-process: what a test needs in the database before it starts, done by the
// same library functions the command line calls (src/cli is a thin layer over them), over
// the same real database, without spawning `node bin/compplan.js` (about 0.3 CPU-seconds a
// command). A test of a command itself (test/cli, the import's command tests) runs the
// command with test/helpers/cli.ts; a test that only needs data, a key, a user or a
// setting in place uses these. DEVELOPERS.md, "Set-up in tests".
import type { Actor } from '../../src/audit/entry.js';
import { withDatabase } from '../../src/cli/context.js';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle, Db } from '../../src/db/connect.js';
import { type ImportSummary, importDataSet as importInto } from '../../src/import/load.js';
import type { DataSetInput } from '../../src/import/schema.js';
import type { PasswordHashing } from '../../src/users/password.js';
import type { Role } from '../../src/users/repository.js';
import { type CreatedUser, createUser as createUserWith } from '../../src/users/service.js';

/**
 * The scrypt cost of the password hashes tests make (startTestServer's app, createUser
 * below): N = 2^10 instead of production's 2^15, about 1 ms instead of 50–100 ms a hash.
 * Hashes name their parameters, so both kinds verify everywhere; production's cost is
 * tested where it is made (test/webapp/users-cli.test.ts, test/webapp/password-cost.test.ts,
 * test/unit/password.test.ts). Never read from the environment.
 */
export const TEST_PASSWORD_HASHING: PasswordHashing = Object.freeze({
  cost: Object.freeze({ n: 1_024, r: 8, p: 1 }),
});

/**
 * Opens the database DATABASE_URL `databaseUrl` names (`sqlite:PATH` or a PostgreSQL URL),
 * brings its schema up to date and runs `work`, as every command does (withDatabase of
 * src/cli/context.ts), with the configuration's defaults for everything else.
 */
export function withSetUpDatabase<T>(
  databaseUrl: string,
  work: (database: DatabaseHandle) => Promise<T>,
): Promise<T> {
  // Only DATABASE_URL: the defaults of every other variable, whatever this process has.
  return withDatabase(loadConfig({ DATABASE_URL: databaseUrl }), work);
}

/** `compplan import` of a data set (JSON or NDJSON alike once read), in-process. */
export function importDataSet(
  databaseUrl: string,
  dataSet: DataSetInput,
  options: { prune?: boolean } = {},
): Promise<ImportSummary> {
  return withSetUpDatabase(databaseUrl, (database) => importInto(database, dataSet, options));
}

/**
 * A user with a one-time password, as `compplan users create` and Settings → Users make
 * one, its hash at the test cost (TEST_PASSWORD_HASHING).
 */
export function createUser(
  db: Db,
  input: { org: string; email: string; role: Role },
  actor?: Actor,
): Promise<CreatedUser> {
  return createUserWith(db, input, actor, TEST_PASSWORD_HASHING);
}
