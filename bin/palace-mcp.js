#!/usr/bin/env node
// Thin launcher: compiled by `npm run build`.
import '../dist/cli/palace-mcp.js';
