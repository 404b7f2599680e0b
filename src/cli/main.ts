// The `compplan` command line (README.md, "Command line"): a thin layer over the modules.
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { ManagementError } from '../errors.js';
import { ImportError } from '../import/errors.js';
import { packageVersion } from '../version.js';
import { registerAudit } from './commands/audit.js';
import { registerCycles } from './commands/cycles.js';
import { registerDemo } from './commands/demo.js';
import { registerExport } from './commands/export.js';
import { registerImport } from './commands/import.js';
import { registerKeys } from './commands/keys.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOrgs } from './commands/orgs.js';
import { registerServe } from './commands/serve.js';
import { registerUsers } from './commands/users.js';
import { registerWebhooks } from './commands/webhooks.js';
import { configFromEnvironment } from './context.js';
import { describeDatabaseFailure } from './database-failures.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './errors.js';

export function buildProgram(): Command {
  const program = new Command('compplan')
    .description('compplan: the read-only Compensation Planning External API')
    .version(packageVersion(), '-V, --version', 'print the version of compplan')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerServe(program);
  registerMigrate(program);
  registerImport(program);
  registerDemo(program);
  registerOrgs(program);
  registerCycles(program);
  registerKeys(program);
  registerExport(program);
  registerUsers(program);
  registerWebhooks(program);
  registerAudit(program);
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return program;
}

/**
 * The database being unreachable, unwritable or locked, as one line (database-failures.ts),
 * for any command: those that run in withDatabase and those that open it themselves
 * (serve, migrate).
 */
function databaseFailure(error: unknown): string | undefined {
  try {
    return describeDatabaseFailure(error, configFromEnvironment().database);
  } catch {
    return undefined; // a bad configuration has been reported before any database work
  }
}

function fail(message: string, exitCode: number): never {
  process.stderr.write(`compplan: ${message}\n`);
  process.exit(exitCode);
}

export async function main(argv: readonly string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv as string[]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed its message (or the help) already.
      process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
    }
    if (error instanceof ConfigError) fail(error.message, EXIT_USAGE);
    if (error instanceof ImportError) {
      fail(
        `the data set was not imported; nothing changed.\n${error.lines.join('\n')}`,
        EXIT_FAILURE,
      );
    }
    if (error instanceof CliError) fail(error.message, error.exitCode);
    if (error instanceof ManagementError) fail(error.message, EXIT_FAILURE);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      fail(`the port is already in use: ${(error as Error).message}`, EXIT_FAILURE);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') {
      fail(
        `cannot listen on the configured address (HOST or --host): ${(error as Error).message}`,
        EXIT_USAGE,
      );
    }
    const database = databaseFailure(error);
    if (database) fail(database, EXIT_FAILURE);
    fail(
      `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      EXIT_FAILURE,
    );
  }
}

await main(process.argv);
