#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=100 --no-allocation-site-pretenuring
// The compiled command line, bundled (npm ci builds it through the prepare script;
// scripts/bundle-cli.js says why it is one bundle). The V8 flags above are how every
// compplan process runs — `npm start`, `npx compplan …` and the systemd units execute this
// file, so its first line is the one place they are set (docs/operations.md, "Node's
// memory settings", says what each does and what it was measured to save).
import '../dist/cli-bundle/main.js';
