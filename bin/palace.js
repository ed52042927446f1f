#!/usr/bin/env node
// Launcher. The everyday commands run from the CLI bundle (dist/cli/palace.bundle.cjs, one script)
// through a V8 code cache beside it, so a call starts near node's own start-up; every other command,
// or a tree with no bundle, loads the compiled CLI (dist/cli/main.js). docs/cli.md, "Start-up".
// CommonJS (bin/package.json): an ES module entry would start node's ESM loader before anything runs.
'use strict';

const { readFileSync, renameSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const vm = require('node:vm');

const BUNDLE = join(__dirname, '..', 'dist', 'cli', 'palace.bundle.cjs');
const MAIN = join(__dirname, '..', 'dist', 'cli', 'main.js');
/**
 * V8 rejects a cache made under other node flags (a profiler, NODE_OPTIONS): runs with flags keep their
 * own file (the last such set wins), so they never overwrite the everyday one.
 */
const FLAGS = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\0');
const CACHE = `${BUNDLE}.${FLAGS === '' ? '' : 'flags.'}cache`;

/** A short, stable name for a string (FNV-1a, 32 bits): which flags a cache was made under. */
function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/**
 * Top-level commands the bundle runs: the everyday coordination commands, and the memory, mining and
 * curation commands (one tool call each, on the palace or through its hub: unbundled a `wings` loads
 * ~450 ES modules, half its CPU). The rest (serve, mcp, daemon, admin, and a bare
 * --version, lighter unbundled) load the compiled CLI.
 */
const BUNDLED = new Set([
  'logstream', 'artifact', 'hook', 'instructions',
  'search', 'status', 'drawer', 'rate', 'duplicate', 'tags', 'wings',
  'mine', 'mined', 'sweep', 'split',
  'checkpoint', 'bulk-move', 'purge', 'prune', 'rename-wing', 'export', 'import', 'kg', 'diary', 'wake-up',
]);

/** The command name of an argument list (the first word that is not an option or --palace's value). */
function commandOf(args) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--palace') i++;
    else if (!args[i].startsWith('-')) return args[i];
  }
  return undefined;
}

/** The cache's key: the bundle's content hash (its first line), the node that compiled it and its flags. */
function cacheKey(source) {
  const first = source.slice(0, source.indexOf('\n'));
  const m = /^\/\/ palace-bundle ([0-9a-f]{64})$/.exec(first);
  return m ? `palace-cache 1 ${m[1]} ${source.length} ${process.version} ${process.versions.v8} ${process.arch} ${fnv1a(FLAGS)}\n` : undefined;
}

/** Runs the bundle with its code cache; false when there is no bundle, or one older than the compiled CLI. */
function runBundle() {
  let source;
  try {
    // tsc run again without the bundle step (npm run build does both) leaves the bundle stale.
    if (statSync(BUNDLE).mtimeMs < statSync(MAIN).mtimeMs) return false;
    source = readFileSync(BUNDLE, 'latin1');
  } catch {
    return false;
  }
  const key = cacheKey(source);
  let cachedData;
  if (key) {
    try {
      const file = readFileSync(CACHE);
      const head = Buffer.byteLength(key);
      if (file.subarray(0, head).toString('latin1') === key) cachedData = file.subarray(head);
    } catch {
      // no cache yet: this run writes it
    }
  }
  // A CommonJS wrapper; __palaceImport is the bundle's import() of builtins and external packages.
  const wrapper = `(function (exports, require, module, __filename, __dirname, __palaceImport) {${source}\n})`;
  const script = new vm.Script(wrapper, { filename: BUNDLE, cachedData });
  if (key && (cachedData === undefined || script.cachedDataRejected)) {
    // Saved once the command is done, with every function it ran compiled. A failed write (read-only
    // install) only means the next run compiles again.
    process.once('exit', () => {
      const tmp = `${CACHE}.${process.pid}.tmp`;
      try {
        writeFileSync(tmp, Buffer.concat([Buffer.from(key, 'latin1'), script.createCachedData()]));
        renameSync(tmp, CACHE);
      } catch {
        rmSync(tmp, { force: true }); // not writable: compile each time
      }
    });
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE), (specifier) => import(specifier));
  return true;
}

/**
 * `palace`, `palace --help`, `palace help` (beside --palace): the grouped help the build wrote
 * (dist/cli/help.txt, from cli/help.ts), printed with nothing loaded; false when it is missing or older
 * than the compiled CLI, which then prints it itself.
 */
function printHelp(args) {
  const rest = args.filter((a, i) => a !== '--palace' && args[i - 1] !== '--palace');
  if (!rest.every((a) => a === '--help' || a === '-h' || a === 'help')) return false;
  const file = join(__dirname, '..', 'dist', 'cli', 'help.txt');
  try {
    if (statSync(file).mtimeMs < statSync(MAIN).mtimeMs) return false;
    process.stdout.write(readFileSync(file, 'utf8'));
    return true;
  } catch {
    return false;
  }
}

const args = process.argv.slice(2);
const name = commandOf(args);
if (!printHelp(args) && (name === undefined || !BUNDLED.has(name) || !runBundle())) import('../dist/cli/main.js');
