// compplan as operators run it: `node bin/compplan.js serve …` with the systemd unit's
// Node flags, and the other commands, spawned for real from the compiled code (`npm run
// build` first; npm test does it). Each process gets a clean environment (the shell's
// PORT, DATABASE_URL … never leak in) plus what the caller passes, and is stopped by PID:
// SIGTERM, then SIGKILL. The commands run through test/helpers/cli.ts's runner.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnvironment, REPO_ROOT, runCli } from '../cli.js';
import { stopProcess, waitFor } from './process.js';

const BIN = join(REPO_ROOT, 'bin', 'compplan.js');

export type CompplanEnvironment = Readonly<Record<string, string>>;

/**
 * The V8 flags every compplan process runs with: those of bin/compplan.js's first line
 * (`#!/usr/bin/env -S node FLAGS…`), which `npm start`, `npx compplan` and the systemd
 * units execute. Servers started here pass them to node explicitly, as the script would.
 */
export function compplanNodeFlags(): string[] {
  const shebang = readFileSync(join(REPO_ROOT, 'bin', 'compplan.js'), 'utf8').split('\n')[0] ?? '';
  const words = /^#!\/usr\/bin\/env -S node\s+(.*)$/.exec(shebang)?.[1]?.split(/\s+/) ?? [];
  return words.filter((word) => word.startsWith('--'));
}

function spawnServer(
  args: readonly string[],
  env: CompplanEnvironment,
  nodeFlags: readonly string[],
): ChildProcess {
  const child = spawn(process.execPath, [...nodeFlags, BIN, ...args], {
    cwd: REPO_ROOT,
    env: cliEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  return child;
}

/** Runs `compplan ARGS…` and returns its standard output; throws unless it exits 0. */
export async function compplan(args: readonly string[], env: CompplanEnvironment): Promise<string> {
  const result = await runCli(args, { env, timeoutMs: 60_000 });
  if (result.code !== 0) {
    throw new Error(`compplan ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  }
  return result.stdout;
}

export interface CompplanInstance {
  /** e.g. http://127.0.0.1:41234, as the server printed it. */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Standard output so far: the JSON log, one object a line. */
  logs(): Record<string, unknown>[];
  /** Standard error so far: what the server prints for people. */
  stderr(): string;
  /** SIGTERM, then SIGKILL after the grace period; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface StartOptions {
  /** Ready when /readyz answers 200 and this holds for its body (default: any body). */
  ready?: (readiness: Record<string, unknown>) => boolean;
  timeoutMs?: number;
}

const LISTENING = /compplan is listening on (http:\/\/\S+)/;

/**
 * Starts `compplan serve --host 127.0.0.1 --port 0`, with the Node flags of the systemd
 * unit, and waits until it has printed where
 * it listens and its /readyz answers 200. Port 0: the system picks a free port as the
 * server binds, so another process cannot take it in between (as it can a port found
 * free a moment earlier, on a machine running other suites).
 */
export async function startCompplan(
  env: CompplanEnvironment,
  options: StartOptions = {},
): Promise<CompplanInstance> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const child = spawnServer(
    ['serve', '--host', '127.0.0.1', '--port', '0'],
    env,
    compplanNodeFlags(),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not spawn compplan serve');
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async () => {
    await stopProcess(child, 12_000);
    return exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`compplan serve did not start within ${timeoutMs} ms: ${stderr}`)),
        timeoutMs,
      );
      child.stderr?.on('data', () => {
        const match = LISTENING.exec(stderr);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`compplan serve exited (${code}) before listening: ${stderr}`));
      });
    });
    const port = Number(new URL(url).port);
    const ready = options.ready ?? (() => true);
    await waitFor(
      async () => {
        const response = await fetch(`${url}/readyz`);
        const body = (await response.json()) as Record<string, unknown>;
        return response.status === 200 && ready(body);
      },
      timeoutMs,
      `${url}/readyz`,
    );
    return {
      url,
      port,
      pid,
      logs: () =>
        stdout
          .split('\n')
          .slice(0, -1) // the last piece is an unfinished line, or empty
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      stderr: () => stderr,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
