#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build`.
import '../dist/cli/main.js';
