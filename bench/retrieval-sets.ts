// The retrieval bench's labelled sets (bench/retrieval/): loading and checking them, the code set's
// pinned snapshot of this repository (git archive of the pinned commit), and relevance: a code hit is
// relevant when its file is the truth file and its lines overlap the truth range; a conversation hit
// when its session file is the truth session. Format: bench/retrieval/README.md.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { basename, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StoredDrawer } from '../hub/src/vector/vector-store.js';

/** The repository root, from the built bench (dist/bench/) or its source (bench/, as tests run it). */
export const REPO_ROOT = ['../../', '../', '../../../']
  .map((up) => fileURLToPath(new URL(up, import.meta.url)))
  .find((dir) => existsSync(join(dir, 'bench', 'retrieval', 'code.json'))) ?? fileURLToPath(new URL('../../', import.meta.url));
export const SETS_DIR = join(REPO_ROOT, 'bench', 'retrieval');

export interface CodeTruth {
  path: string;
  lines: [number, number];
}

export interface Question<Truth> {
  id: string;
  kind?: string;
  question: string;
  truth: Truth[];
}

export interface CodeSet {
  name: 'code';
  commit: string;
  questions: Array<Question<CodeTruth>>;
}

/**
 * A code set over a package installed in node_modules that this team did not write (issue 32: the
 * second code set, written before any tuning). The corpus is the installed package folder, copied as
 * is; the set names the exact version, so line numbers hold only for that version.
 */
export interface PackageSet {
  name: string;
  package: string;
  version: string;
  questions: Array<Question<CodeTruth>>;
}

export interface ConvoSet {
  name: 'convos';
  /** Folder of session files, relative to bench/retrieval/. */
  sessions: string;
  questions: Array<Question<string>>;
}

function fail(file: string, message: string): never {
  throw new Error(`${file}: ${message}`);
}

function checkQuestions<T>(file: string, raw: unknown, truth: (t: unknown) => t is T): Array<Question<T>> {
  if (!Array.isArray(raw)) fail(file, 'questions must be an array');
  const ids = new Set<string>();
  return raw.map((q: unknown, i) => {
    const o = q as Record<string, unknown>;
    if (typeof o.id !== 'string' || ids.has(o.id)) fail(file, `question ${i}: id missing or repeated`);
    ids.add(o.id);
    if (typeof o.question !== 'string' || o.question.trim() === '') fail(file, `question ${o.id}: no question text`);
    if (!Array.isArray(o.truth) || o.truth.length === 0 || !o.truth.every(truth)) fail(file, `question ${o.id}: truth malformed`);
    return { id: o.id, question: o.question, truth: o.truth, ...(typeof o.kind === 'string' ? { kind: o.kind } : {}) };
  });
}

const isCodeTruth = (t: unknown): t is CodeTruth => {
  const o = t as Record<string, unknown>;
  return (
    typeof o === 'object' && o !== null && typeof o.path === 'string' && Array.isArray(o.lines) && o.lines.length === 2 &&
    Number.isInteger(o.lines[0]) && Number.isInteger(o.lines[1]) && (o.lines[0] as number) >= 1 && (o.lines[0] as number) <= (o.lines[1] as number)
  );
};

export function loadCodeSet(file = join(SETS_DIR, 'code.json')): CodeSet {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (typeof raw.commit !== 'string' || !/^[0-9a-f]{7,40}$/.test(raw.commit)) fail(file, 'commit must be a git commit hash');
  return { name: 'code', commit: raw.commit, questions: checkQuestions(file, raw.questions, isCodeTruth) };
}

/** The package sets: every `<name>.json` of bench/retrieval/ with a `package` field. */
export function packageSetFiles(dir = SETS_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(dir, f))
    .filter((f) => typeof (JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>).package === 'string');
}

export function loadPackageSet(file: string): PackageSet {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (typeof raw.package !== 'string' || !/^(@[a-z0-9._-]+\/)?[a-z0-9._-]+$/.test(raw.package)) fail(file, 'package must name an npm package');
  if (typeof raw.version !== 'string' || raw.version === '') fail(file, 'version must be the exact package version');
  return { name: basename(file, '.json'), package: raw.package, version: raw.version, questions: checkQuestions(file, raw.questions, isCodeTruth) };
}

/** The installed package's folder, checked to be the set's version (else its line numbers are wrong). */
export function packageDir(set: PackageSet): string {
  const dir = join(REPO_ROOT, 'node_modules', set.package);
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) throw new Error(`${set.name}: package ${set.package} is not installed in node_modules`);
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version;
  if (version !== set.version) throw new Error(`${set.name}: node_modules has ${set.package} ${version}, the set was written for ${set.version}`);
  return dir;
}

export function loadConvoSet(file = join(SETS_DIR, 'convos.json')): ConvoSet {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (typeof raw.sessions !== 'string') fail(file, 'sessions must name the folder of session files');
  const questions = checkQuestions(file, raw.questions, (t): t is string => typeof t === 'string');
  const known = new Set(sessionFiles(join(SETS_DIR, raw.sessions)).map(sessionOf));
  for (const q of questions) for (const s of q.truth) if (!known.has(s)) fail(file, `question ${q.id}: no session '${s}'`);
  return { name: 'convos', sessions: raw.sessions, questions };
}

export function sessionFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((f) => join(dir, f));
}

/** A session's id: its file name without the extension. */
export function sessionOf(file: string): string {
  return basename(file, extname(file));
}

/** Extracts the pinned commit's tree into `dir` (nothing else: no node_modules, no build output). */
export function snapshot(commit: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  let tar: Buffer;
  try {
    tar = execFileSync('git', ['archive', '--format=tar', commit], { cwd: REPO_ROOT, maxBuffer: 1 << 30 });
  } catch (err) {
    throw new Error(`cannot archive commit ${commit} of ${REPO_ROOT} (a shallow clone lacks it?): ${(err as Error).message}`);
  }
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
}

/** A search result as the bench sees it: `location` when the chunker gives one, `lines` when a stored drawer's metadata does. */
export interface BenchHit {
  content: string;
  source_file: string | null;
  location?: { path: string; line_start: number; line_end: number } | null;
  lines?: [number, number];
}

/** Line (1-based) of character offset `at` in `text`. */
function lineOf(text: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * The lines of a code hit in its snapshot file: from `location` when present, else by finding its
 * verbatim content in the file (leading lines a chunker may have added, e.g. a symbol header, are
 * dropped one by one until the rest is found). Undefined when it cannot be placed.
 */
export function hitLines(hit: BenchHit, fileText: (path: string) => string | undefined, rel: string): [number, number] | undefined {
  if (hit.location) return [hit.location.line_start, hit.location.line_end];
  if (hit.lines) return hit.lines;
  const text = fileText(rel);
  if (text === undefined) return undefined;
  let body = hit.content.replace(/\r\n/g, '\n');
  while (body.trim() !== '') {
    const at = text.indexOf(body);
    if (at >= 0) return [lineOf(text, at), lineOf(text, at + Math.max(0, body.length - 1))];
    const nl = body.indexOf('\n');
    if (nl < 0) break;
    body = body.slice(nl + 1);
  }
  return undefined;
}

/** Relative path of a hit's file under `root` (posix separators), or undefined when outside. */
export function relativeTo(root: string, file: string | null): string | undefined {
  if (!file) return undefined;
  const rel = relative(root, file);
  if (rel.startsWith('..')) return undefined;
  return rel.split(sep).join('/');
}

export function codeRelevant(hit: BenchHit, root: string, truth: readonly CodeTruth[], fileText: (path: string) => string | undefined): boolean {
  const rel = hit.location?.path ?? relativeTo(root, hit.source_file);
  if (!rel) return false;
  const matching = truth.filter((t) => t.path === rel);
  if (matching.length === 0) return false;
  const lines = hitLines(hit, fileText, rel);
  if (!lines) return false;
  return matching.some((t) => lines[0] <= t.lines[1] && lines[1] >= t.lines[0]);
}

export function convoRelevant(hit: BenchHit, truth: readonly string[]): boolean {
  return hit.source_file !== null && truth.includes(sessionOf(hit.source_file));
}

/** Reads snapshot files once each. */
export function fileReader(root: string): (path: string) => string | undefined {
  const cache = new Map<string, string | undefined>();
  return (path) => {
    if (!cache.has(path)) {
      const full = join(root, path);
      cache.set(path, existsSync(full) ? readFileSync(full, 'utf8') : undefined);
    }
    return cache.get(path);
  };
}

/** A stored drawer as a bench hit: its line range from the miner's metadata when it has one. */
export function asBenchHit(d: StoredDrawer): BenchHit {
  const { line_start: start, line_end: end, rel_path: path } = d.metadata;
  const lines = typeof start === 'number' && typeof end === 'number' ? ([start, end] as [number, number]) : undefined;
  return {
    content: d.content,
    source_file: d.source_file,
    // As search reports it (snippet.ts hitLocation): the path in the mined project, and the lines.
    ...(lines && typeof path === 'string' ? { location: { path, line_start: lines[0], line_end: lines[1] } } : {}),
    ...(lines ? { lines } : {}),
  };
}
