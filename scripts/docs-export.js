#!/usr/bin/env node
// npm run docs:export: builds the app (npm run build runs first) and writes the OpenAPI
// document it serves at /openapi.json to the committed openapi.json, then regenerates the
// client SDK's types from it (openapi-typescript). Commit both: tests fail when either
// drifts from the app.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderOpenApiDocument } from '../dist/docs/openapi-document.js';

const root = fileURLToPath(new URL('..', import.meta.url));
writeFileSync(`${root}openapi.json`, await renderOpenApiDocument());
process.stdout.write('wrote openapi.json\n');
execFileSync('npm', ['run', 'generate', '--workspace', '@compplan/client'], {
  cwd: root,
  stdio: 'inherit',
});
