#!/usr/bin/env node
// `npm run app`: builds what changed, then starts the tray app under Electron. Electron's binary is
// not downloaded by `npm ci` (its install script is off in package.json's allowScripts), so when it is
// missing this says so in one line, with the command that fetches it and what to run instead.

/* global URL, process */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The Electron executable, or undefined when its binary was never fetched (or is gone). */
export function electronBinary(root = ROOT) {
  const dir = join(root, 'node_modules', 'electron');
  let name;
  try {
    name = readFileSync(join(dir, 'path.txt'), 'utf8').trim();
  } catch {
    return undefined;
  }
  const path = join(dir, 'dist', name);
  return name !== '' && existsSync(path) ? path : undefined;
}

export const MISSING =
  "palace app: Electron's binary is not installed (npm ci skips its download): fetch it with `node node_modules/electron/install.js`, " +
  'or run the hub and use the dashboard in a browser instead: `npm start`, then open http://127.0.0.1:8765/ui/';

function main() {
  const binary = electronBinary();
  if (!binary) {
    process.stderr.write(`${MISSING}\n`);
    process.exit(1);
  }
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.mjs'), '--quiet'], { cwd: ROOT, stdio: 'inherit' });
  const child = spawn(binary, ['.', ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
