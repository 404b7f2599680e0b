// What every command shares: the configuration, an open and migrated database, and the
// way rows are printed. How failures reach the user: errors.ts, database-failures.ts;
// SIGINT and SIGTERM: interruption.ts.
//
// Commands load what they use when they run (dynamic import), not when the program
// starts: `compplan --help` or `keys list` should not pay for Fastify, faker or both
// database drivers.
import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Config, loadConfig } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';
import { StopAfterAbort } from './interruption.js';

export function configFromEnvironment(overrides: Record<string, string | undefined> = {}): Config {
  const defined = Object.fromEntries(
    Object.entries(overrides).filter(([, value]) => value !== undefined),
  );
  return loadConfig({ ...process.env, ...defined });
}

/**
 * Opens the configured database, brings its schema up to date, runs `work`, closes it.
 * With `undoCreation`, a SQLite file that did not exist before (and any folder made for
 * it) is removed again when opening it or `work` fails: importing a bad file into a
 * database that was not there leaves nothing behind, as a bad file leaves an existing
 * database unchanged. With `checkWritable`, a SQLite database that cannot be written, or
 * whose write lock another writer holds, fails before `work` starts (before an import
 * reads its input). With `signal`, once it is aborted (`interruptible`) every statement
 * of `work` but a rollback fails with its reason, so that work in a transaction is never
 * committed after an interruption.
 */
export async function withDatabase<T>(
  config: Config,
  work: (database: DatabaseHandle) => Promise<T>,
  options: { undoCreation?: boolean; checkWritable?: boolean; signal?: AbortSignal } = {},
): Promise<T> {
  const { openDatabase } = await import('../db/connect.js');
  const { migrateToLatest } = await import('../db/migrate.js');
  const created = options.undoCreation ? newSqlitePaths(config) : undefined;
  let database: DatabaseHandle | undefined;
  let failed = false;
  try {
    database = openDatabase(config.database);
    await migrateToLatest(database);
    if (options.checkWritable) database.checkWritable?.();
    const { signal } = options;
    if (!signal) return await work(database);
    signal.throwIfAborted();
    const stop = new StopAfterAbort(signal);
    return await work({
      ...database,
      db: database.db.withPlugin(stop),
      longDb: database.longDb.withPlugin(stop),
    });
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await database?.close();
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

/** Never throws: what failed matters more than what could not be tidied away. */
function removeCreated({ files, folders }: CreatedPaths): void {
  for (const file of files) {
    try {
      rmSync(file, { force: true });
    } catch {
      // not there (ENOTDIR: its folder is a file), or not ours to remove
    }
  }
  for (const folder of folders) {
    try {
      rmdirSync(folder); // only when empty: never anything that is not ours
    } catch (error) {
      // Not made (creating a folder above it failed): the next one up may have been.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
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
