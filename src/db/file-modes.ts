// SQLite's files readable by their owner only (docs/operations.md, "Files"): the database
// holds every salary. SQLite makes a new database file 0644 less the umask, and its -wal
// and -shm files with the database file's mode; so the database file is made here first,
// 0600, and a folder made for it 0700, whatever the umask (umask only takes bits away, and
// a umask of 0 would leave 0644 and 0755). Files of an existing database that compplan's
// user owns and others may read are tightened to the owner's bits of their mode, and
// reported: an installation made before this release, or a copy made with another umask,
// would otherwise stay readable by every local user. Files another user owns are left as
// they are (only their owner or root may change them).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

export const DATABASE_FILE_MODE = 0o600;
export const DATABASE_FOLDER_MODE = 0o700;
// SQLite's companions of a database file (the journal of a rollback-mode database too).
const COMPANIONS = ['-wal', '-shm', '-journal'];

/** A file of an existing database made readable by its owner only: which, and its mode before. */
export interface Tightened {
  file: string;
  from: number;
}

/**
 * Makes `path`'s folder (0700, each folder made) and the database file (0600) when they do
 * not exist, and tightens the existing files of the database; what it tightened.
 */
export function prepareDatabaseFiles(path: string): Tightened[] {
  const folder = dirname(path);
  const first = mkdirSync(folder, { recursive: true, mode: DATABASE_FOLDER_MODE });
  if (first !== undefined) {
    // Each folder made, from the first one down to the database's own.
    let made = first;
    chmodSync(made, DATABASE_FOLDER_MODE);
    for (const part of relative(first, folder).split(sep).filter(Boolean)) {
      made = join(made, part);
      chmodSync(made, DATABASE_FOLDER_MODE);
    }
  }
  if (!existsSync(path)) {
    try {
      closeSync(openSync(path, 'wx', DATABASE_FILE_MODE));
      chmodSync(path, DATABASE_FILE_MODE);
      return [];
    } catch (error) {
      // Not made here (a read-only folder, a path through a file): SQLite's own open then
      // fails as it would have, and src/cli/database-failures.ts says why in one line.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return [];
      // Another process made it meanwhile: it is checked as an existing one below.
    }
  }
  // A file that is not a SQLite database (a wrong DATABASE_URL) is left as it is: SQLite
  // refuses it, and nothing of it is changed.
  if (!isSqliteFile(path)) return [];
  const tightened: Tightened[] = [];
  const uid = process.getuid?.();
  for (const file of [path, ...COMPANIONS.map((suffix) => `${path}${suffix}`)]) {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(file);
    } catch {
      continue;
    }
    const mode = stat.mode & 0o777;
    if ((mode & 0o077) === 0 || !stat.isFile() || stat.uid !== uid) continue;
    chmodSync(file, mode & 0o700);
    tightened.push({ file, from: mode });
  }
  return tightened;
}

// The first bytes of every SQLite database file (sqlite.org/fileformat.html); an empty
// file is a database not yet written.
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

function isSqliteFile(path: string): boolean {
  let file: number | undefined;
  try {
    file = openSync(path, 'r');
    const head = Buffer.alloc(SQLITE_HEADER.length);
    const read = readSync(file, head, 0, head.length, 0);
    return read === 0 || head.equals(SQLITE_HEADER);
  } catch {
    // Unreadable, or a folder: SQLite says why.
    return false;
  } finally {
    if (file !== undefined) closeSync(file);
  }
}

/** What is said of a file tightened. */
export const tightenedMessage = ({ file, from }: Tightened): string =>
  `${file} was readable by other users (mode ${from.toString(8).padStart(4, '0')}): made readable by its owner only (docs/operations.md, "Files")`;
