#!/usr/bin/env node
// The compiled CLI (npm ci builds dist/ through the prepare script).
import '../dist/cli/main.js';
