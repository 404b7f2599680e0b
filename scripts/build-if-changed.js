#!/usr/bin/env node
// `npm start` (prestart): builds only when the build is missing or its inputs changed since
// the last build, so that a second start serves at once and a start after `git pull`,
// a branch switch or an edit still runs what the sources say.
//
// The build's inputs are hashed by content (not by modification time: a checkout may
// restore an older file, or give an unchanged one a new time): every file under src/
// and packages/client/src/, the tsconfigs, package.json, package-lock.json and the build
// scripts themselves. `npm run build` ends by writing that hash to dist/.build-stamp;
// here it is compared with the sources' hash now.
//
//   node scripts/build-if-changed.js           build unless current
//   node scripts/build-if-changed.js --check   exit 0 when current, 1 when a build is due
//   node scripts/build-if-changed.js --stamp   record the current inputs as built
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = process.cwd();
const STAMP = join(ROOT, 'dist', '.build-stamp');
const INPUT_FOLDERS = ['src', 'packages/client/src'];
const INPUT_FILES = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'packages/client/tsconfig.json',
  'packages/client/package.json',
  'scripts/bundle-cli.js',
  'scripts/build-if-changed.js',
];
// What `npm start` runs; without them there is nothing to start, whatever the stamp says.
const OUTPUTS = ['dist/cli-bundle/main.js', 'packages/client/dist/index.js'];

function filesUnder(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** One hash of every input's path and content, in a fixed order. */
function inputsHash() {
  const files = [
    ...INPUT_FOLDERS.flatMap((folder) => filesUnder(join(ROOT, folder))),
    ...INPUT_FILES.map((file) => join(ROOT, file)).filter((file) => existsSync(file)),
  ]
    .map((file) => relative(ROOT, file).split('\\').join('/'))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(ROOT, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function isCurrent() {
  if (!OUTPUTS.every((file) => existsSync(join(ROOT, file)))) return false;
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === inputsHash();
}

const [mode] = process.argv.slice(2);
if (mode === '--stamp') {
  writeFileSync(STAMP, `${inputsHash()}\n`);
} else if (mode === '--check') {
  process.exit(isCurrent() ? 0 : 1);
} else if (mode !== undefined) {
  process.stderr.write(`build-if-changed: unknown option ${mode}\n`);
  process.exit(2);
} else if (isCurrent()) {
  process.stderr.write('The build is up to date with the sources: starting it.\n');
} else {
  process.stderr.write('The sources changed since the last build (or there is none): building.\n');
  const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exit(build.status ?? 1);
}
