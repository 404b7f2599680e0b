// Runs the real, compiled command line (`node bin/compplan.js …`) as a child process, as
// users and the acceptance tests do. `npm run build` must have run (npm test does it).
// Every process started here is tracked by PID and stopped by its owner: SIGTERM first,
// SIGKILL only when it has not exited a few seconds later.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { stopProcess } from './services/process.js';
import { importDataSet } from './set-up.js';
import { comparable, inStableOrder } from './snapshot.js';

export { stopProcess };

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(REPO_ROOT, 'bin', 'compplan.js');

export interface CliResult {
  /** Exit code; null when the process was ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Added to (and overriding) a clean environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to standard input, which is then closed. Without it stdin is closed at once. */
  input?: string | Uint8Array;
  timeoutMs?: number;
}

/** This process's environment without compplan's variables, plus `extra`. */
export function cliEnvironment(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

const running = new Set<ChildProcess>();

/**
 * Spawns the command line: `node bin/compplan.js ARGS…`, or with `executable` the script
 * itself, as `npm start`, `npx compplan` and the systemd units run it (its first line
 * starts node with compplan's V8 flags).
 */
function spawnCli(
  args: readonly string[],
  env: Record<string, string | undefined> | undefined,
  executable = false,
  cwd = REPO_ROOT,
) {
  const [command, commandArgs] = executable ? [BIN, [...args]] : [process.execPath, [BIN, ...args]];
  const child = spawn(command, commandArgs, {
    cwd,
    env: cliEnvironment(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  // A child that exits before reading its input must not crash the test with EPIPE.
  child.stdin?.on('error', () => {});
  return child;
}

/** Runs `compplan ARGS…` to completion and returns what it printed and its exit code. */
export async function runCli(
  args: readonly string[],
  options: RunOptions = {},
): Promise<CliResult> {
  const child = spawnCli(args, options.env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdin?.end(options.input ?? '');
  const timeoutMs = options.timeoutMs ?? 15_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stopProcess(child, 2_000);
  }, timeoutMs);
  const { code, signal } = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
  }>((resolve, reject) => {
    child.once('error', reject);
    // 'close' (not 'exit'): standard output and error have been read to the end.
    child.once('close', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal }));
  }).finally(() => clearTimeout(timer));
  if (timedOut) {
    throw new Error(
      `compplan ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
    );
  }
  return { code, signal, stdout, stderr };
}

/**
 * runCli, begun now and awaited later: a command that only waits (out a client's retries,
 * say) is started in beforeAll and waits while the other tests run. A failure before it is
 * awaited is not an unhandled rejection; awaiting it still throws.
 */
export function runCliMeanwhile(
  args: readonly string[],
  options: RunOptions = {},
): Promise<CliResult> {
  const result = runCli(args, options);
  result.catch(() => {});
  return result;
}

export interface CliServer {
  /** The URL the server printed, e.g. http://127.0.0.1:41234 */
  url: string;
  process: ChildProcess;
  /** Everything written to standard error so far (the human-readable start-up text). */
  stderr(): string;
  /** Everything written to standard output so far (the JSON log lines). */
  stdout(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves with how the process ended. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }>;
}

const LISTENING = /compplan is listening on (http:\/\/\S+)/;

export interface CliServerOptions {
  timeoutMs?: number;
  /** false: no --host flag, so that the server listens where HOST or its default says. */
  hostFlag?: boolean;
  /** The working directory (relative paths, such as the default ./data); the repository's. */
  cwd?: string;
}

/**
 * Starts `bin/compplan.js serve --port 0 --host 127.0.0.1 [extra…]` (the script executed, as
 * `npm start` does) and waits until it prints the
 * URL it listens on. Start-up output ends with an empty line, which is waited for too, so
 * that what `serve --demo` prints after the URL has all arrived.
 */
export async function startCliServer(
  extraArgs: readonly string[],
  env: Record<string, string | undefined>,
  { timeoutMs = 20_000, hostFlag = true, cwd }: CliServerOptions = {},
): Promise<CliServer> {
  const host = hostFlag ? ['--host', '127.0.0.1'] : [];
  const child = spawnCli(['serve', '--port', '0', ...host, ...extraArgs], env, true, cwd);
  child.stdin?.end();
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: string) => {
    stdout += chunk;
  });
  const stop = () => stopProcess(child);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the server did not start within ${timeoutMs} ms: ${stderr}`)),
        timeoutMs,
      );
      let settle: NodeJS.Timeout | undefined;
      child.stderr?.on('data', (chunk: string) => {
        stderr += chunk;
        const url = LISTENING.exec(stderr)?.[1];
        if (!url) return;
        clearTimeout(settle);
        const done = () => {
          clearTimeout(timer);
          resolve(url);
        };
        // The start-up text ends with an empty line; should it not, take what came in 1 s.
        if (stderr.endsWith('\n\n')) done();
        else settle = setTimeout(done, 1_000);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the server exited (${code ?? signal}) before listening: ${stderr}`));
      });
    });
    return { url, process: child, stderr: () => stderr, stdout: () => stdout, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Stops every process this helper started that is still running (a safety net for afterAll). */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...running].map((child) => stopProcess(child)));
}

export interface TempDatabase {
  dir: string;
  /** Path of the SQLite file. */
  path: string;
  /** DATABASE_URL of it, `sqlite:PATH`: for in-process set-up (test/helpers/set-up.ts). */
  url: string;
  /** `{ DATABASE_URL: 'sqlite:…' }`, to pass as (part of) a command's environment. */
  env: Record<string, string>;
  /** Writes a file into the temporary directory and returns its path. */
  writeFile(name: string, content: string): string;
  remove(): void;
}

export function tempDatabase(): TempDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'compplan-cli-'));
  const path = join(dir, 'x.db');
  return {
    dir,
    path,
    url: `sqlite:${path}`,
    env: { DATABASE_URL: `sqlite:${path}` },
    writeFile(name, content) {
      const file = join(dir, name);
      writeFileSync(file, content);
      return file;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A new temporary database whose SQLite file is a copy of `from`'s, which no process may
 * have open: tests that each need the same fresh data load it once and start from a copy,
 * instead of running an import before every test.
 */
export function copyOfDatabase(from: TempDatabase): TempDatabase {
  const copy = tempDatabase();
  for (const suffix of ['', '-wal']) {
    if (existsSync(`${from.path}${suffix}`))
      copyFileSync(`${from.path}${suffix}`, `${copy.path}${suffix}`);
  }
  return copy;
}

/**
 * A database each test of the file starts from afresh: `dataSet` loaded once in-process
 * (importDataSet of set-up.ts, in beforeAll), each test given a copy of it (beforeEach), all removed
 * in afterAll. `current()` is the running test's.
 */
export function freshCopiesOf(dataSet: DataSetInput): { current(): TempDatabase } {
  let loaded: TempDatabase | undefined;
  let copy: TempDatabase | undefined;
  beforeAll(async () => {
    loaded = tempDatabase();
    // In-process: the import command is not what these tests are about (set-up.ts).
    await importDataSet(loaded.url, dataSet);
  });
  beforeEach(() => {
    copy?.remove();
    copy = copyOfDatabase(loaded as TempDatabase);
  });
  afterAll(() => {
    copy?.remove();
    loaded?.remove();
  });
  return {
    current() {
      if (!copy) throw new Error('no test is running');
      return copy;
    },
  };
}

/** The audit log of a SQLite database, every entry, oldest first. */
export function auditEntries(path: string): Record<string, unknown>[] {
  const sqlite = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    return sqlite.prepare('select * from audit_entries order by id').all() as Record<
      string,
      unknown
    >[];
  } finally {
    sqlite.close();
  }
}

/**
 * Every row of every table of a SQLite database, in a stable order, without what every
 * import and request writes (snapshot.ts, `comparable`): for before/after checks.
 */
export function dumpDatabase(path: string): Record<string, unknown[]> {
  const sqlite = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    const tables = sqlite
      .prepare("select name from sqlite_master where type = 'table' order by name")
      .all() as { name: string }[];
    // Not by rowid: a table stored in key order (WITHOUT ROWID, migration 0006) has none.
    return Object.fromEntries(
      tables.map(({ name }) => [
        name,
        inStableOrder(
          comparable(name, sqlite.prepare(`select * from "${name.replaceAll('"', '""')}"`).all()),
        ),
      ]),
    );
  } finally {
    sqlite.close();
  }
}

/**
 * Runs several commands, at most `concurrency` at a time (the machine has two cores: more
 * only makes each one slower), and returns their results in the order given.
 */
export async function runAllCli(
  calls: readonly (readonly string[])[],
  options: RunOptions | ((index: number) => RunOptions) = {},
  concurrency = 2,
): Promise<CliResult[]> {
  const results: CliResult[] = new Array(calls.length);
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const index = next++;
      const args = calls[index] ?? [];
      results[index] = await runCli(args, typeof options === 'function' ? options(index) : options);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, worker));
  return results;
}
