#!/usr/bin/env node
// The compiled command line, bundled (npm ci builds it through the prepare script;
// scripts/bundle-cli.js says why it is one bundle).
import '../dist/cli-bundle/main.js';
