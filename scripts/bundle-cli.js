#!/usr/bin/env node
// npm run build, after tsc: copies the web application's static files into dist/, and bundles the command line (dist/cli/main.js and every module it
// imports, at once or lazily) into dist/cli-bundle/, which bin/compplan.js runs.
//
// Why: Node 20 loads ES modules one file at a time (resolve, read, link), about a
// millisecond each, and an import loaded ~430 of them (Kysely alone 262, zod 95) — half of
// a process's start-up, paid by every command and twenty times by a million employees in
// twenty files (docs/benchmarks.md). One file per lazily loaded part loads in a fraction.
//
// Only plain JavaScript packages are bundled (BUNDLED); every other package stays an
// import from node_modules: native code (better-sqlite3), packages that find files or
// start workers relative to themselves (pino, @fastify/swagger-ui), and what only the
// server or the PostgreSQL URL loads. fastify-type-provider-zod is bundled because it
// imports zod, and there must be one zod (the schemas are checked by identity).
import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const BUNDLED = new Set(['kysely', 'zod', 'commander', 'fastify-type-provider-zod']);

/** The package a bare specifier names: `@scope/name/x` → `@scope/name`, `zod/v4` → `zod`. */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

const keepUnbundled = {
  name: 'keep-unbundled-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path }) =>
      path.startsWith('node:') || !BUNDLED.has(packageOf(path)) ? { external: true } : undefined,
    );
  },
};

// The web application's stylesheets, script and icon (src/web/assets.ts reads them from
// ../web/static/ beside its module): tsc copies no such file, and the bundle's chunks, one
// folder beside dist/web, find them at the same relative path.
rmSync('dist/web/static', { recursive: true, force: true });
cpSync('src/web/static', 'dist/web/static', { recursive: true });

const OUT = 'dist/cli-bundle';
// Chunks are named by their content: the last build's would otherwise stay beside them.
rmSync(OUT, { recursive: true, force: true });
await build({
  // The worker threads (the import's, the bulk download's, the audit log's writer) are
  // started by file name, next to the module that starts them (src/import/intake-worker.ts,
  // src/threads/module-thread.ts): here, next to every chunk.
  entryPoints: {
    main: 'dist/cli/main.js',
    'intake-worker': 'dist/import/intake-worker.js',
    'csv-worker': 'dist/modules/bulk/csv-worker.js',
    'writer-thread': 'dist/audit/writer-thread.js',
  },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Stack traces keep the names of functions and classes; the source maps (tsc's, carried
  // through) lead back to src/ under node --enable-source-maps.
  keepNames: true,
  sourcemap: true,
  // commander is CommonJS: its require() of Node's own modules needs a require.
  banner: {
    js: "import { createRequire as __compplanCreateRequire } from 'node:module'; const require = __compplanCreateRequire(import.meta.url);",
  },
  plugins: [keepUnbundled],
  logLevel: 'warning',
});
