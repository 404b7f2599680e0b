// `npm start` builds only when the sources changed since the last build
// (scripts/build-if-changed.js), judged by content, on a copy of the repository's inputs.
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';

const INPUTS = [
  'src',
  'packages/client/src',
  'packages/client/tsconfig.json',
  'packages/client/package.json',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts',
];
const OUTPUTS = ['dist/cli-bundle/main.js', 'packages/client/dist/index.js'];

describe('npm start: build only when the sources changed', () => {
  let copy: string;
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['scripts/build-if-changed.js', ...args], {
      cwd: copy,
      encoding: 'utf8',
      timeout: 60_000,
    });
  const current = () => run('--check').status === 0;

  beforeEach(() => {
    copy = mkdtempSync(join(tmpdir(), 'compplan-build-'));
    for (const input of INPUTS)
      cpSync(join(REPO_ROOT, input), join(copy, input), { recursive: true });
    for (const output of OUTPUTS) {
      mkdirSync(dirname(join(copy, output)), { recursive: true });
      writeFileSync(join(copy, output), '');
    }
  });
  afterEach(() => {
    rmSync(copy, { recursive: true, force: true });
  });

  it('package.json: npm start runs the check, and every build records what it built', () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.prestart).toBe('node scripts/build-if-changed.js');
    expect(scripts.build?.endsWith(' && node scripts/build-if-changed.js --stamp')).toBe(true);
  });

  it('is current after a build, and stale after any change of a source, a new or removed file, the lock file, or a missing output', () => {
    expect(current()).toBe(false); // no build recorded yet
    expect(run('--stamp').status).toBe(0);
    expect(current()).toBe(true);

    const app = join(copy, 'src/app.ts');
    const original = readFileSync(app);
    appendFileSync(app, '\n// an edit\n');
    expect(current()).toBe(false);
    writeFileSync(app, original);
    // The same content with a new time (a checkout touching it) needs no build.
    utimesSync(app, new Date(), new Date(Date.now() + 60_000));
    expect(current()).toBe(true);

    writeFileSync(join(copy, 'packages/client/src/new-file.ts'), 'export {};\n');
    expect(current()).toBe(false);
    rmSync(join(copy, 'packages/client/src/new-file.ts'));
    expect(current()).toBe(true);

    rmSync(join(copy, 'src/plugins/home.ts'));
    expect(current()).toBe(false);
    run('--stamp');
    expect(current()).toBe(true);

    appendFileSync(join(copy, 'package-lock.json'), '\n');
    expect(current()).toBe(false);
    run('--stamp');

    rmSync(join(copy, 'dist/cli-bundle/main.js'));
    expect(current()).toBe(false);
  });

  it('starts without building when current, and runs npm run build (which records it) when not', () => {
    // A build that only leaves a mark, so that the test shows whether it ran.
    const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    manifest.scripts.build =
      "node -e \"require('node:fs').appendFileSync('built', 'x')\" && node scripts/build-if-changed.js --stamp";
    writeFileSync(join(copy, 'package.json'), JSON.stringify(manifest));

    const stale = run();
    expect(stale.status).toBe(0);
    expect(stale.stderr).toContain(
      'The sources changed since the last build (or there is none): building.',
    );
    expect(readFileSync(join(copy, 'built'), 'utf8')).toBe('x');
    expect(current()).toBe(true);

    const fresh = run();
    expect(fresh).toMatchObject({
      status: 0,
      stderr: 'The build is up to date with the sources: starting it.\n',
    });
    expect(readFileSync(join(copy, 'built'), 'utf8')).toBe('x');
  });
});
