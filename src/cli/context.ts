// What every command shares: the configuration, an open and migrated database, and the
// way failures reach the user (one line on standard error, a meaningful exit code).
//
// Commands load what they use when they run (dynamic import), not when the program
// starts: `compplan --help` or `keys list` should not pay for Fastify, faker or both
// database drivers.
import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
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

/**
 * Opens the configured database, brings its schema up to date, runs `work`, closes it.
 * With `undoCreation`, a SQLite file that did not exist before (and any folder made for
 * it) is removed again when `work` fails: importing a bad file into a database that was
 * not there leaves nothing behind, as a bad file leaves an existing database unchanged.
 */
export async function withDatabase<T>(
  config: Config,
  work: (database: DatabaseHandle) => Promise<T>,
  options: { undoCreation?: boolean } = {},
): Promise<T> {
  const { openDatabase } = await import('../db/connect.js');
  const { migrateToLatest } = await import('../db/migrate.js');
  const created = options.undoCreation ? newSqlitePaths(config) : undefined;
  const database = openDatabase(config.database);
  let failed = false;
  try {
    await migrateToLatest(database);
    return await work(database);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await database.db.destroy();
    if (failed && created) removeCreated(created);
  }
}

interface CreatedPaths {
  files: string[];
  /** Folders that do not exist yet, deepest first. */
  folders: string[];
}

/** What opening this SQLite database would create; undefined when it exists already. */
function newSqlitePaths(config: Config): CreatedPaths | undefined {
  const target = config.database;
  if (target.dialect !== 'sqlite' || target.path === ':memory:' || existsSync(target.path)) {
    return undefined;
  }
  const folders: string[] = [];
  for (let folder = dirname(resolve(target.path)); !existsSync(folder); folder = dirname(folder)) {
    folders.push(folder);
  }
  const files = ['', '-wal', '-shm', '-journal'].map((suffix) => `${target.path}${suffix}`);
  return { files, folders };
}

function removeCreated({ files, folders }: CreatedPaths): void {
  for (const file of files) rmSync(file, { force: true });
  for (const folder of folders) {
    try {
      rmdirSync(folder); // only when empty: never anything that is not ours
    } catch {
      return;
    }
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
