// compplan's one version: package.json's. `compplan --version` prints it and the OpenAPI
// document's info.version is it. Read from the package root, found by walking up from this
// module: it runs from src/, from tsc's dist/ and from the command line's bundle
// (dist/cli-bundle/), each at another depth below the root.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'compplan';

let version: string | undefined;

export function packageVersion(): string {
  if (version !== undefined) return version;
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(folder, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version: string };
      if (manifest.name === PACKAGE_NAME) {
        version = manifest.version;
        return version;
      }
    }
    const parent = dirname(folder);
    if (parent === folder) throw new Error(`no package.json of ${PACKAGE_NAME} above ${folder}`);
    folder = parent;
  }
}
