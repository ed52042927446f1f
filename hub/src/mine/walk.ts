// Lists the files a mine reads: project text/code files (skip lists, .gitignore respected),
// conversation transcripts or documents, in a stable (sorted) order. Reads names, never contents.

import { existsSync, readdirSync, readFileSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, extname, join, relative, sep } from 'node:path';

import type { Ignore } from 'ignore';

// `ignore` is CommonJS whose typings declare an ES default export; load it the CommonJS way.
const ignore = createRequire(import.meta.url)('ignore') as () => Ignore;

export const PROJECT_EXTENSIONS: ReadonlySet<string> = new Set(
  '.txt .md .mdx .rst .py .js .mjs .cjs .ts .mts .cts .jsx .tsx .json .jsonl .yaml .yml .html .css .scss .java .kt .go .rs .rb .php .c .h .cc .cpp .hpp .cs .swift .sh .bash .zsh .csv .sql .toml .ini .cfg .lua .r .scala .ex .exs .erl .hs .ml .clj .vue .svelte .astro .tf .proto .graphql .gradle .dockerfile'.split(' '),
);
export const CONVO_EXTENSIONS: ReadonlySet<string> = new Set(['.txt', '.md', '.json', '.jsonl']);
export const EXTRACT_EXTENSIONS: ReadonlySet<string> = new Set(['.md', '.markdown', '.html', '.htm', '.txt', '.pdf', '.docx']);

export const SKIP_DIRS: ReadonlySet<string> = new Set(
  '.git .hg .svn node_modules __pycache__ .venv venv env dist build out .next .nuxt coverage .palace .mempalace .ruff_cache .mypy_cache .pytest_cache .cache .tox .nox .idea .vscode .ipynb_checkpoints .eggs htmlcov target .turbo .parcel-cache vendor'.split(' '),
);
export const SKIP_NAMES: ReadonlySet<string> = new Set([
  'entities.json',
  'palace.yaml',
  'palace.yml',
  '.gitignore',
  'package-lock.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'Cargo.lock',
  'poetry.lock',
  'composer.lock',
  'Gemfile.lock',
  'go.sum',
]);
/** Files above this size are skipped (generated or data files, not knowledge). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Text files known by their whole name (no extension): build, container and project files. */
const EXTENSIONLESS: ReadonlySet<string> = new Set(
  'Dockerfile Containerfile Makefile GNUmakefile Justfile Procfile Vagrantfile Gemfile Rakefile Jenkinsfile Caddyfile README LICENSE NOTICE AUTHORS CONTRIBUTING CHANGELOG CODEOWNERS'.split(' '),
);
/**
 * Extensions of plain-text configuration a project commits besides its code: systemd units, service
 * configs, build includes. Project mode only (they are deployment knowledge, not documents).
 */
const CONFIG_EXTENSIONS: ReadonlySet<string> = new Set('.service .socket .timer .path .mount .target .conf .properties .xml .mk .cmake .nix .hcl .ps1 .bat'.split(' '));
/**
 * Suffixes that mark a committed template of a config file (`.env.example`, `config.yml.sample`,
 * `phpunit.xml.dist`): text written for people to copy, mined in project mode whatever the inner
 * name. A template holds placeholders; the real `.env` it is copied to is never mined (dot-files
 * without a known extension are not listed).
 */
const TEMPLATE_SUFFIXES: ReadonlySet<string> = new Set(['.example', '.sample', '.template', '.dist', '.tmpl']);

export interface WalkOptions {
  extensions: ReadonlySet<string>;
  /** Respect .gitignore files (root and nested). */
  gitignore: boolean;
  /** Extra names (files or dirs) to skip. */
  skip?: (name: string, isDir: boolean) => boolean;
  /**
   * Whether a folder or file may be read at all (the mining roots); refused ones are left out. Given
   * the entry's path and its real path (the walk never follows a symlink, so that is the real path of
   * its folder joined with its name: no lookup per file).
   */
  admit?: (path: string, real: string) => boolean;
}

function wanted(name: string, extensions: ReadonlySet<string>): boolean {
  if (SKIP_NAMES.has(name) || name.endsWith('.min.js') || name.endsWith('.map')) return false;
  const ext = extname(name).toLowerCase();
  if (extensions === PROJECT_EXTENSIONS && (CONFIG_EXTENSIONS.has(ext) || (TEMPLATE_SUFFIXES.has(ext) && name.length > ext.length))) return true;
  return ext === '' ? extensions === PROJECT_EXTENSIONS && EXTENSIONLESS.has(name) : extensions.has(ext);
}

function gitignoreAt(dir: string): Ignore | undefined {
  const path = join(dir, '.gitignore');
  if (!existsSync(path)) return undefined;
  try {
    return ignore().add(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The walk, folder by folder: yields after each folder it has read (nothing: it is a pause point),
 * and returns the files. listFiles runs it straight through; listFilesSliced hands the event loop
 * back between folders once a slice of time has passed.
 */
function* walk(root: string, options: WalkOptions): Generator<void, string[]> {
  const stat = statSync(root);
  if (stat.isFile()) return [root];
  const out: string[] = [];
  const rules: Array<{ base: string; ig: Ignore }> = [];
  const ignored = (path: string, isDir: boolean): boolean =>
    rules.some(({ base, ig }) => {
      const rel = relative(base, path).split(sep).join('/');
      return rel !== '' && !rel.startsWith('..') && ig.ignores(isDir ? `${rel}/` : rel);
    });
  function* visit(dir: string, realDir: string): Generator<void, void> {
    const own = options.gitignore ? gitignoreAt(dir) : undefined;
    if (own) rules.push({ base: dir, ig: own });
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      entries = [];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = join(dir, e.name);
      const real = join(realDir, e.name);
      if (e.isDirectory()) {
        if (SKIP_DIRS.has(e.name) || e.name.endsWith('.egg-info') || options.skip?.(e.name, true) || ignored(path, true)) continue;
        if (options.admit && !options.admit(path, real)) continue;
        yield* visit(path, real);
      } else if (
        e.isFile() &&
        wanted(e.name, options.extensions) &&
        !options.skip?.(e.name, false) &&
        !ignored(path, false) &&
        (!options.admit || options.admit(path, real))
      ) {
        out.push(path);
      }
    }
    if (own) rules.pop();
    yield;
  }
  yield* visit(root, options.admit ? realpathSync(root) : root);
  return out;
}

/** Files under `root` (or `root` itself when it is a file), absolute, sorted. */
export function listFiles(root: string, options: WalkOptions): string[] {
  const it = walk(root, options);
  for (;;) {
    const step = it.next();
    if (step.done) return step.value;
  }
}

/** As listFiles, handing the event loop back between two folders every `sliceMs` (a hub walking a large tree). */
export async function listFilesSliced(root: string, options: WalkOptions, sliceMs: number): Promise<string[]> {
  const it = walk(root, options);
  let slice = performance.now();
  for (;;) {
    const step = it.next();
    if (step.done) return step.value;
    if (performance.now() - slice >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  }
}

/** Whether bytes look like text (no NUL in the first 8 KiB). */
export function looksText(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8192);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return false;
  return true;
}

/**
 * How a project's files map to rooms. Normally a file's room is its first folder under the mined root.
 * When one top-level folder holds most of the files (a `src/` layout) and has sub-folders, rooms of
 * one big folder would say nothing, so that folder's sub-folders become the rooms instead.
 */
export interface RoomPlan {
  /** The top-level folder (as named on disk) whose sub-folders are rooms; undefined: no split. */
  split?: string;
  /** Every top-level folder's room name, so a sub-folder room never merges into a top-level one. */
  topLevel: ReadonlySet<string>;
}

const roomName = (folder: string): string => folder.replace(/^\.+/, '').toLowerCase();

/** The room plan of the files a mine reads under `root`: split the one folder holding more than half of them. */
export function roomPlan(root: string, files: readonly string[]): RoomPlan {
  const count = new Map<string, number>();
  const subfolders = new Map<string, Set<string>>();
  for (const file of files) {
    const rel = relative(root, file).split(sep);
    if (rel.length < 2 || rel[0] === undefined) continue;
    count.set(rel[0], (count.get(rel[0]) ?? 0) + 1);
    if (rel.length > 2 && rel[1] !== undefined) subfolders.set(rel[0], (subfolders.get(rel[0]) ?? new Set()).add(rel[1]));
  }
  const topLevel = new Set([...count.keys()].map(roomName));
  const [biggest, n] = [...count].reduce<[string | undefined, number]>((best, [folder, c]) => (c > best[1] ? [folder, c] : best), [undefined, 0]);
  const split = biggest !== undefined && n * 2 > files.length && (subfolders.get(biggest)?.size ?? 0) >= 2 ? biggest : undefined;
  return split === undefined ? { topLevel } : { split, topLevel };
}

/**
 * The room of a project file: its first folder under the mined root, else `general`; under the plan's
 * split folder, its sub-folder (`src/auth/x.ts` → `auth`, or `src-auth` when a top-level `auth/` exists
 * too), and the split folder's own files stay in its room.
 */
export function projectRoom(root: string, file: string, plan?: RoomPlan): string {
  const rel = relative(root, file).split(sep);
  const first = rel.length > 1 ? rel[0] : undefined;
  if (!first) return 'general';
  const top = roomName(first) || 'general';
  if (plan?.split !== first || rel.length < 3) return top;
  const sub = roomName(rel[1] ?? '');
  if (sub === '') return top;
  return plan.topLevel.has(sub) ? `${top}-${sub}` : sub;
}

/** The rooms a file gets when its top-level folder is split (either form), for explaining a placement. */
export function splitRoomsOf(root: string, file: string): string[] {
  const [first, sub, ...rest] = relative(root, file).split(sep);
  if (first === undefined || sub === undefined || rest.length === 0) return [];
  return [roomName(sub), `${roomName(first)}-${roomName(sub)}`];
}

/** The default wing of a mined directory: its folder name, lower-case, safe characters only. */
export function defaultWing(root: string): string {
  const name = basename(root).toLowerCase().replace(/[^a-z0-9._-]+/g, '_').replace(/^_+|_+$/g, '');
  return name || 'default';
}
