#!/usr/bin/env node
// Thin launcher: compiled by `npm run build`. CommonJS (bin/package.json), so a dynamic import.
import('../dist/cli/palace-mcp.js');
