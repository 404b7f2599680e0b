// The benchmark scripts refuse a bad flag at once, with a message that names it and exit
// status 2, before they start a database or a server (bench/options.ts).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `node --import tsx SCRIPT FLAGS…`, as `npm run bench`, `bench:data` and `soak` start
 * them: one process, where the tsx command would start a second.
 */
function runScript(script: string, flags: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script, ...flags],
      { cwd: ROOT, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (error.code as number | null) : 0, stdout, stderr }),
    );
  });
}

describe('benchmark flags', () => {
  it.each([
    ['bench/run.ts', ['--rounds', 'x'], '--rounds must be a whole number of at least 1, not "x"'],
    ['bench/run.ts', ['--seconds', '0'], '--seconds must be a whole number of at least 1, not "0"'],
    [
      'bench/run.ts',
      ['--warm-up', '1.5'],
      '--warm-up must be a whole number of at least 0, not "1.5"',
    ],
    ['bench/run.ts', ['--only', 'mysql'], '--only must be sqlite or postgres, not "mysql"'],
    ['bench/run.ts', ['--only'], "Option '--only <value>' argument missing"],
    ['bench/run.ts', ['--bogus'], "Unknown option '--bogus'"],
    [
      'bench/data.ts',
      ['--employees', '1e6'],
      '--employees must be a whole number of at least 1, not "1e6"',
    ],
    ['bench/data.ts', ['--deep'], "Option '--deep <value>' argument missing"],
    ['bench/data.ts', ['--format', 'xml'], '--format must be ndjson or json, not "xml"'],
    ['bench/soak.ts', ['--keys', '0'], '--keys must be a whole number of at least 1, not "0"'],
  ])('%s %j is refused: %s', async (script, flags, message) => {
    const { code, stdout, stderr } = await runScript(script, flags);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')[0]).toBe(message);
    expect(stderr).not.toContain('    at ');
  });
});
