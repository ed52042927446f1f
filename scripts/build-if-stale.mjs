#!/usr/bin/env node
// Runs `npm run build` only when the build's inputs changed since the last successful build, so
// `npm start` on an unchanged tree starts the hub at once. The inputs are fingerprinted by content
// (path + sha256 of every source and config file the build reads). `npm run build` itself calls
// `--begin` (drops the stamp, notes the inputs' fingerprint) and `--end` (stamps dist/ with it), so a
// failed, interrupted or hand-run build can never leave a stamp that does not match dist/.

/* global URL, process */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'dist', '.build-stamp');
const PENDING = `${STAMP}.pending`;
/** Folders whose files feed tsc or the two Vite builds. */
const INPUT_DIRS = ['hub/src', 'cli', 'bench', 'main', 'renderer', 'assets'];
/** Single files that change what the build emits. */
const INPUT_FILES = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'test/helpers/tiny-bert.ts',
  'scripts/build-cli-bundle.mjs',
];
/** Outputs that must exist for the stamp to be trusted (someone may have deleted dist/ in part). */
const OUTPUTS = ['dist/cli/main.js', 'dist/cli/palace.bundle.cjs', 'dist/hub/src/main.js', 'dist/ui/index.html', 'dist/main/preload.cjs'];

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.isFile()) out.push(path);
  }
}

/** The fingerprint of every build input, independent of mtimes (a checkout or touch alone rebuilds nothing). */
export function fingerprint(root = ROOT) {
  const files = [];
  for (const dir of INPUT_DIRS) walk(join(root, dir), files);
  for (const file of INPUT_FILES) if (existsSync(join(root, file))) files.push(join(root, file));
  files.sort();
  const hash = createHash('sha256');
  hash.update(`node ${process.versions.node}\n`);
  for (const file of files) {
    hash.update(relative(root, file));
    hash.update('\0');
    hash.update(createHash('sha256').update(readFileSync(file)).digest());
  }
  return hash.digest('hex');
}

function isCurrent(print) {
  if (!OUTPUTS.every((o) => existsSync(join(ROOT, o)))) return false;
  try {
    return readFileSync(STAMP, 'utf8').trim() === print;
  } catch {
    return false;
  }
}

/** Progress goes to stderr: stdout stays free for `--check` and for what the caller prints. */
function say(text) {
  process.stderr.write(`build: ${text}\n`);
}

function main(args) {
  if (args.includes('--begin')) {
    // Inputs are fingerprinted before the build reads them: an edit made while it runs makes the next start rebuild.
    rmSync(STAMP, { force: true });
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    writeFileSync(PENDING, `${fingerprint()}\n`);
    say('compiling TypeScript (tsc), then the CLI bundle, the dashboard and the tray preload (Vite) into dist/');
  } else if (args.includes('--end')) {
    if (existsSync(PENDING)) {
      const took = (Date.now() - statSync(PENDING).mtimeMs) / 1000;
      renameSync(PENDING, STAMP);
      say(`dist/ is built (${took.toFixed(1)} s)`);
    }
  } else {
    const print = fingerprint();
    if (args.includes('--check')) process.stdout.write(isCurrent(print) ? 'current\n' : 'stale\n');
    else if (isCurrent(print)) {
      if (!args.includes('--quiet')) say('dist/ is current, nothing to rebuild');
    } else {
      const first = !existsSync(STAMP) && !existsSync(join(ROOT, 'dist', 'cli', 'main.js'));
      say(
        first
          ? 'first build of this checkout: about 30 s on 2 cores; progress follows'
          : 'the sources changed since the last build: rebuilding dist/ (up to about 30 s)',
      );
      const started = Date.now();
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      // The build's own tools print to stdout; a caller that must keep stdout clean passes --quiet.
      const out = args.includes('--quiet') ? 'ignore' : 'inherit';
      execFileSync(npm, ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', out, 'inherit'] });
      say(`ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
