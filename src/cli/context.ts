// What every command shares: the configuration, an open and migrated database, and the
// way failures reach the user (one line on standard error, a meaningful exit code).
//
// Commands load what they use when they run (dynamic import), not when the program
// starts: `compplan --help` or `keys list` should not pay for Fastify, faker or both
// database drivers.
import { type Config, loadConfig } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';

/** Exit codes: 1 when the command could not do its work, 2 when it was called wrongly. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure to report as it is, without a stack trace. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}

export function configFromEnvironment(overrides: Record<string, string | undefined> = {}): Config {
  const defined = Object.fromEntries(
    Object.entries(overrides).filter(([, value]) => value !== undefined),
  );
  return loadConfig({ ...process.env, ...defined });
}

/** Opens the configured database, brings its schema up to date, runs `work`, closes it. */
export async function withDatabase<T>(
  config: Config,
  work: (database: DatabaseHandle) => Promise<T>,
): Promise<T> {
  const { openDatabase } = await import('../db/connect.js');
  const { migrateToLatest } = await import('../db/migrate.js');
  const database = openDatabase(config.database);
  try {
    await migrateToLatest(database);
    return await work(database);
  } finally {
    await database.db.destroy();
  }
}

/** Rows as an aligned text table with a header, for people; --json is for programs. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
