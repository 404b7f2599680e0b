// The version `compplan --version` prints: package.json's, read where the command runs.
// src/cli/, dist/cli/ and dist/cli-bundle/ (bin/compplan.js) all sit two folders below
// the package root, so one relative path serves the sources, tsc's output and the bundle.
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return manifest.version;
}
