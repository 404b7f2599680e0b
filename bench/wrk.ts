// Runs wrk (Debian's package), the load generator of `npm run bench` and `npm run soak`,
// with a Lua script of bench/wrk/, and reads what it measured from the line of JSON the
// script prints when wrk is done (bench/wrk/result.lua). wrk, in C, sends requests at a
// fraction of the CPU a Node load generator needs: on the 2-core machine autocannon
// saturated its own core before the server did (docs/benchmarks.md).
import { execFile } from 'node:child_process';
import { join } from 'node:path';

const SCRIPTS = join(import.meta.dirname, 'wrk');

export interface WrkResult {
  requests: number;
  seconds: number;
  /** Requests a second over the run. */
  rps: number;
  bytes: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** wrk's "Non-2xx or 3xx responses": every answer of status 400 or more. */
  non2xx: number;
  /** wrk's "Socket errors": connect, read, write and timeouts. */
  socketErrors: number;
  /** Answers by status, when the script counts them (random.lua); else empty. */
  statuses: Record<string, number>;
}

export interface WrkRun {
  /** The base URL (walk.lua, random.lua) or the URL requested (key.lua). */
  url: string;
  script: 'key.lua' | 'walk.lua' | 'random.lua';
  /** The script's arguments (after `--`). */
  scriptArgs: string[];
  /** The key key.lua and walk.lua send, passed in the environment (BENCH_API_KEY). */
  apiKey?: string;
  seconds: number;
  connections: number;
}

/** Exits the process with a clear message when wrk is not installed. */
export async function requireWrk(): Promise<void> {
  await new Promise<void>((resolve) => {
    execFile('wrk', ['--version'], (error) => {
      // wrk --version prints its banner and exits 1; only a missing binary is an error.
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        process.stderr.write('wrk is not installed: apt-get install wrk (DEVELOPERS.md)\n');
        process.exit(2);
      }
      resolve();
    });
  });
}

/** One wrk run of one thread (`-t1`), latency distribution on. */
export function runWrk(run: WrkRun): Promise<WrkResult> {
  const args = [
    '-t1',
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    '--latency',
    '-s',
    join(SCRIPTS, run.script),
    run.url,
    '--',
    ...run.scriptArgs,
  ];
  return new Promise((resolve, reject) => {
    const env = { ...process.env, BENCH_API_KEY: run.apiKey ?? '' };
    execFile('wrk', args, { env, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      const line = stdout.split('\n').find((text) => text.startsWith('{"wrkResult":'));
      if (error || !line) {
        reject(
          new Error(`wrk ${args.join(' ')} failed: ${error?.message ?? ''}\n${stdout}${stderr}`),
        );
        return;
      }
      resolve(parseResult(line));
    });
  });
}

/** What bench/wrk/result.lua prints: wrk's own figures, latencies in µs. */
interface RawResult {
  requests: number;
  durationUs: number;
  bytes: number;
  non2xx: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
  statuses: Record<string, number>;
}

/** The line of JSON bench/wrk/result.lua prints, in the units of the bench. */
export function parseResult(line: string): WrkResult {
  const raw = JSON.parse(line) as RawResult;
  const seconds = raw.durationUs / 1e6;
  return {
    requests: raw.requests,
    seconds,
    rps: raw.requests / seconds,
    bytes: raw.bytes,
    p50Ms: raw.p50Us / 1000,
    p90Ms: raw.p90Us / 1000,
    p99Ms: raw.p99Us / 1000,
    maxMs: raw.maxUs / 1000,
    non2xx: raw.non2xx,
    socketErrors: raw.connectErrors + raw.readErrors + raw.writeErrors + raw.timeouts,
    statuses: raw.statuses,
  };
}
