#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js and everything it can load) into one CommonJS script,
// dist/cli/palace.bundle.cjs, that bin/palace.js runs through a V8 code cache (docs/cli.md, "Start-up").
// Node 20's ESM loader pays per module (~480 files for a no-hub `logstream list`); one script whose
// compiled code is cached is loaded and compiled at once. Runs after tsc in `npm run build`.

/* global URL, process */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = join(ROOT, 'dist', 'cli');
export const BUNDLE = join(OUT_DIR, 'palace.bundle.cjs');
/** `--debug`: not minified (readable, for profiling module start-up); comments may then name import(). */
const DEBUG = process.argv.includes('--debug');

/**
 * Left to Node at run time: native addons and the heavy or ESM-only packages only the memory, mining,
 * embedding and serving code paths load (the bundled commands never reach them).
 */
const EXTERNAL = [
  'better-sqlite3',
  '@lancedb/*',
  'apache-arrow',
  'onnxruntime-node',
  'web-tree-sitter',
  'tree-sitter-*',
  '@energetic-ai/*',
  '@huggingface/*',
  'pg',
  'pdfjs-dist',
  'mammoth',
  'chokidar',
  'electron',
];

/** A dynamic import() and what it names when that is a string literal. */
const DYNAMIC_IMPORT = /(?<![\w$.])import\((\s*(['"])([^'"]+)\2)?/g;
const isExternal = (specifier) =>
  specifier.startsWith('node:') ||
  EXTERNAL.some((pattern) => (pattern.endsWith('*') ? specifier.startsWith(pattern.slice(0, -1)) : specifier === pattern || specifier.startsWith(`${pattern}/`)));
/** import(x) of a builtin, an external package or a computed name is left to run time; others are bundled. */
const rewriteImports = (source) =>
  source.replace(DYNAMIC_IMPORT, (match, literal, _quote, specifier) =>
    specifier === undefined || isExternal(specifier) ? `__palaceImport(${literal ?? ''}` : match,
  );

/**
 * Two rewrites of each compiled module as it is bundled:
 * - it keeps its own import.meta.url (the dist/ file it was compiled to), so paths it resolves beside
 *   itself (package.json, worker scripts, the dashboard) are the same as unbundled;
 * - a run-time import() (node:http, pg, web-tree-sitter, ...) calls __palaceImport, which bin/palace.js
 *   passes in: an import() inside a vm.Script needs Node's experimental dynamic-import callback (a
 *   warning on stderr), while the launcher's own import() resolves the same bare names from the tree.
 */
const rewriteModules = {
  name: 'palace-rewrite-modules',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta') && !source.includes('import(')) return undefined;
      const rel = relative(OUT_DIR, args.path).split('\\').join('/');
      const url = `new URL(${JSON.stringify(rel)}, __palaceBundleUrl).href`;
      const contents = rewriteImports(source.replaceAll('import.meta.url', url));
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

async function bundle() {
  const result = await build({
    entryPoints: [join(ROOT, 'dist', 'cli', 'main.js')],
    outfile: BUNDLE,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    plugins: [rewriteModules],
    banner: { js: 'const __palaceBundleUrl = require("node:url").pathToFileURL(__filename);' },
    legalComments: 'none',
    minify: !DEBUG,
    keepNames: true,
    logLevel: 'warning',
    write: false,
  });
  const [file] = result.outputFiles;
  if (!DEBUG && /(?<![\w$.])import\(/.test(file.text)) throw new Error('build-cli-bundle: an import() is left in the bundle (see rewriteModules)');
  // ASCII only, so bin/palace.js reads it as latin1 (no UTF-8 decoding): the few non-ASCII characters
  // esbuild leaves (in regular expression literals) become \uXXXX escapes, which mean the same there.
  const code = file.text.replace(/[^\0-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // The first line names the bundle's content: the code cache is valid only for these exact bytes.
  const hash = createHash('sha256').update(code).digest('hex');
  writeFileSync(BUNDLE, `// palace-bundle ${hash}\n${code}`);
}

/**
 * Writes the code cache by running the hot path once (a no-hub `logstream list` on an empty palace):
 * bin/palace.js saves the cache after a run that found none, with the functions that run compiled.
 */
function warm() {
  for (const file of readdirSync(OUT_DIR))
    if (file.startsWith('palace.bundle.cjs.') && file.endsWith('cache')) rmSync(join(OUT_DIR, file), { force: true });
  const home = mkdtempSync(join(tmpdir(), 'palace-bundle-warm-'));
  try {
    const env = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PALACE_')) env[key] = value;
    Object.assign(env, { HOME: home, PALACE_HOME: join(home, '.palace'), PALACE_PALACE_PATH: join(home, 'palace') });
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'palace.js'), 'logstream', 'list', '--limit', '1', '--json'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    if (r.status !== 0) process.stderr.write(`build-cli-bundle: the warm-up run failed (${r.status}): ${r.stderr}\n`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** `palace --help` as text beside the bundle: the launcher prints it without loading any module. */
async function writeHelp() {
  const { helpText } = await import(pathToFileURL(join(OUT_DIR, 'help.js')).href);
  writeFileSync(join(OUT_DIR, 'help.txt'), helpText());
}

await bundle();
await writeHelp();
warm();
