// The layers of src/ (.dependency-cruiser.cjs, DEVELOPERS.md "Dependency direction"): each
// rule refuses an import that breaks it. `npm run check` cruises the real tree; here a copy
// of src/ gets files that break one rule each, and dependency-cruiser is run on them.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise');

/** Each planted file, what it imports, and the rules it breaks (none: it breaks nothing). */
const PLANTED: Record<string, { imports: string[]; breaks: string[] }> = {
  'src/db/upward.ts': { imports: ['../modules/ping/routes.js'], breaks: ['db-imports-upward'] },
  'src/tenancy/upward.ts': {
    imports: ['../api-keys/secret.js'],
    breaks: ['tenancy-imports-upward'],
  },
  'src/import/upward.ts': {
    imports: ['../modules/employees/schema.js'],
    breaks: ['domain-imports-upward'],
  },
  'src/http/upward.ts': { imports: ['../plugins/database.js'], breaks: ['http-imports-upward'] },
  'src/modules/ping/upward.ts': {
    imports: ['../../app.js', '../../odata/routes.js'],
    breaks: ['answers-imports-upward', 'resources-import-feed'],
  },
  'src/web/pages/reads-a-resource.ts': {
    imports: ['../../modules/merit-cycles/repository.js'],
    breaks: ['web-imports-resources'],
  },
  'src/db/migrations/0099-today.ts': {
    imports: ['../../columns/order.js', '../connect.js'],
    breaks: ['db-imports-upward', 'migration-imports-today', 'migration-imports-today'],
  },
  'src/db/migrations/0100-frozen.ts': { imports: ['kysely', 'node:crypto'], breaks: [] },
  'src/columns/circle-a.ts': { imports: ['./circle-b.js'], breaks: ['no-circular'] },
  // A circle is reported once, at the file it is found from.
  'src/columns/circle-b.ts': { imports: ['./circle-a.js'], breaks: [] },
  'src/db/uses-a-new-folder.ts': {
    imports: ['../somewhere-new/thing.js'],
    breaks: ['outside-the-layers'],
  },
  'src/somewhere-new/thing.ts': { imports: [], breaks: [] },
  'src/modules/ping/downward.ts': {
    imports: ['../../http/schemas.js', '../../tenancy/cycles.js', '../../db/connect.js'],
    breaks: [],
  },
};

interface Violation {
  from: string;
  rule: { name: string };
}

let copy: string;
let violations: Violation[];

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'compplan-layers-'));
  cpSync(join(ROOT, 'src'), join(copy, 'src'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  for (const [file, { imports }] of Object.entries(PLANTED)) {
    mkdirSync(join(copy, dirname(file)), { recursive: true });
    const lines = imports.map((from) => `export * from '${from}';`);
    writeFileSync(join(copy, file), `${lines.join('\n')}\nexport const planted = true;\n`);
  }
  // A leaf module that imports the project.
  writeFileSync(join(copy, 'src/ids.ts'), "export * from './errors.js';\n");
  const circle = Object.keys(PLANTED).filter((file) => file.includes('/circle-'));
  const others = Object.keys(PLANTED).filter((file) => !circle.includes(file));
  // Only the planted files' own imports (--max-depth 1), not the tree behind them; a
  // circle is seen only by following its imports, and the planted one is two files.
  violations = [...cruise([...others, 'src/ids.ts', '--max-depth', '1']), ...cruise(circle)];
}, 120_000);

/** The rules' violations among the files dependency-cruiser is given (`args`). */
function cruise(args: string[]): Violation[] {
  const run = spawnSync(
    DEPCRUISE,
    [...args, '--config', join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'],
    { cwd: copy, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  expect(run.stderr).toBe('');
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('the layer rules refuse', () => {
  it.each(Object.entries(PLANTED))('%s: exactly the rules it breaks', (file, { breaks }) => {
    const broken = violations.filter((v) => v.from === file).map((v) => v.rule.name);
    expect(broken.sort()).toEqual([...breaks].sort());
  });

  it('a leaf module (config.ts, errors.ts, ids.ts, version.ts) that imports the project', () => {
    const broken = violations.filter((v) => v.from === 'src/ids.ts').map((v) => v.rule.name);
    expect(broken).toEqual(['leaf-imports-project']);
  });
});
