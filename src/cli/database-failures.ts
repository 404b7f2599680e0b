// Database failures that are the environment, not a bug (unreachable, unwritable, locked),
// as one line that names the server or the file, never DATABASE_URL itself (it may hold a
// password). Exit code 1: the command could not do its work.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import type { DatabaseConfig } from '../config.js';
import { POSTGRES_BOUNDS } from '../db/timeouts.js';

// src/db/connect.ts's SQLITE_BUSY_TIMEOUT_MS (not imported: that would load the drivers
// for every command).
const SQLITE_BUSY_WAIT = '5 s';

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** The one line for a failure of the configured database; undefined for anything else. */
export function describeDatabaseFailure(
  error: unknown,
  database: DatabaseConfig,
): string | undefined {
  // Migrations (src/db/migrate.ts), every command's first use of the database, carry what
  // failed under them as the cause.
  const starting =
    error instanceof Error && error.name === 'MigrationError' && error.cause !== undefined;
  const failure = starting ? error.cause : error;
  return database.dialect === 'sqlite'
    ? describeSqliteFailure(failure, resolve(database.path))
    : describePostgresFailure(failure, database, starting);
}

function codeOf(error: unknown): string | undefined {
  if (error instanceof AggregateError) return error.errors.map(codeOf).find(Boolean);
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function describeSqliteFailure(error: unknown, file: string): string | undefined {
  const code = codeOf(error);
  if (code === undefined) return undefined;
  const cannotOpen = (reason: string) =>
    `cannot open the SQLite database ${file} for writing (${reason})`;
  if (code === 'SQLITE_BUSY') {
    return `the database is busy: another import or writer holds it (waited ${SQLITE_BUSY_WAIT}); nothing changed. Try again.`;
  }
  if (code.startsWith('SQLITE_BUSY')) {
    return 'the database is busy: another import or writer changed it meanwhile; nothing changed. Try again.';
  }
  if (code === 'SQLITE_READONLY_DIRECTORY') {
    return cannotOpen(`its folder ${dirname(file)} is read-only`);
  }
  if (code.startsWith('SQLITE_READONLY')) return cannotOpen(readOnlyReason(file));
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_PERM') return cannotOpen(openReason(file));
  if (code === 'SQLITE_NOTADB') return `${file} is not a SQLite database; check DATABASE_URL`;
  if (code === 'SQLITE_FULL') {
    return `cannot write to the SQLite database ${file} (the disk is full); nothing changed.`;
  }
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CORRUPT') {
    return `cannot read or write the SQLite database ${file} (${(error as Error).message})`;
  }
  // Creating the database's folder (src/db/connect.ts).
  const { syscall, path } = error as NodeJS.ErrnoException;
  if (syscall === 'mkdir' && path !== undefined && isWithin(file, resolve(path))) {
    return cannotOpen(fileSystemReason(code, file));
  }
  return undefined;
}

function isWithin(file: string, folder: string): boolean {
  return file === folder || file.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

function fileSystemReason(code: string | undefined, file: string): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENOTDIR':
    case 'EEXIST': {
      const blocking = existingAncestor(file);
      return blocking === undefined ? 'not a folder' : `${blocking} is a file, not a folder`;
    }
    default:
      return code ?? 'unknown reason';
  }
}

/** The nearest ancestor folder of `file` that exists, when it is not a folder. */
function existingAncestor(file: string): string | undefined {
  for (let path = dirname(file); ; path = dirname(path)) {
    try {
      return statSync(path).isDirectory() ? undefined : path;
    } catch {
      if (dirname(path) === path) return undefined;
    }
  }
}

/** Why SQLite could not open `file`, as far as the file system tells. */
function openReason(file: string): string {
  try {
    if (statSync(file).isDirectory()) return 'it is a folder';
  } catch {
    // absent: SQLite was to create it
  }
  const blocking = existingAncestor(file);
  if (blocking !== undefined) return `${blocking} is a file, not a folder`;
  for (const [path, mode] of [
    [dirname(file), constants.W_OK | constants.X_OK],
    [file, constants.R_OK | constants.W_OK],
  ] as const) {
    try {
      if (existsSync(path)) accessSync(path, mode);
    } catch (error) {
      return fileSystemReason((error as NodeJS.ErrnoException).code, file);
    }
  }
  return 'unable to open the file';
}

function readOnlyReason(file: string): string {
  try {
    accessSync(file, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EROFS') return 'read-only file system';
  }
  return 'the file is read-only';
}

function postgresAddress(url: string): string {
  try {
    const parsed = new URL(url);
    const host =
      parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname) || 'localhost');
    return `${host}:${parsed.port || parsed.searchParams.get('port') || '5432'}`;
  } catch {
    return 'the configured address';
  }
}

// PostgreSQL SQLSTATEs whose server message says it all and holds no secret.
const POSTGRES_REFUSALS: Record<string, string> = {
  '28P01': 'password authentication failed',
  '28000': '', // the server's message: no pg_hba.conf entry for host …, user …, database …
  '3D000': '', // database "…" does not exist
  '53300': 'too many connections',
  '57P03': 'the server is starting up or shutting down',
};

function describePostgresFailure(
  error: unknown,
  database: Extract<DatabaseConfig, { dialect: 'postgres' }>,
  starting: boolean,
): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const where = postgresAddress(database.url);
  const cannotConnect = (reason: string) =>
    `cannot connect to PostgreSQL at ${where} (${reason}); check DATABASE_URL`;
  const code = codeOf(error);
  const network: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name lookup failed; try again',
    ETIMEDOUT: 'no answer',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
  };
  if (code !== undefined && network[code] !== undefined) return cannotConnect(network[code]);
  if (code !== undefined && POSTGRES_REFUSALS[code] !== undefined) {
    return cannotConnect(POSTGRES_REFUSALS[code] || error.message);
  }
  const { message } = error;
  if (
    message.includes('timeout exceeded when trying to connect') ||
    message.includes('Connection terminated due to connection timeout')
  ) {
    const connectMs = database.bounds?.connectMs ?? POSTGRES_BOUNDS.connectMs;
    return cannotConnect(`no answer within ${seconds(connectMs)}`);
  }
  // src/db/errors.ts's DatabaseNotAnswering (not imported, as above).
  if (code === 'COMPPLAN_DATABASE_NOT_ANSWERING') {
    return `PostgreSQL at ${where} stopped answering (no answer within ${seconds(
      (error as { waitedMs?: number }).waitedMs ?? 0,
    )}); the connection was closed, so its transaction was not committed. Try again once it answers.`;
  }
  if (message.includes('does not support SSL')) {
    return cannotConnect('the server does not support SSL; check sslmode');
  }
  if (code === 'ECONNRESET' || message.includes('Connection terminated')) {
    return starting
      ? cannotConnect('the connection was closed')
      : `the connection to PostgreSQL at ${where} was lost; try again`;
  }
  if (code === '57014') return 'PostgreSQL did not answer in time (statement timeout); try again';
  return undefined;
}
