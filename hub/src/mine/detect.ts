// `palace init` scanning: finds the projects under a folder (by their manifest files), proposes a wing
// per project and rooms from its top-level folders, and finds people (git authors; names in notes and
// transcripts, conservatively). Reads names and small text files only; git runs through an injected function.

import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { basename, extname, join } from 'node:path';

import { PROJECT_EXTENSIONS, SKIP_DIRS, defaultWing, listFiles, projectRoom, roomPlan } from './walk.js';

/** Files whose presence makes a folder a project. */
export const PROJECT_MARKERS: readonly string[] = [
  '.git',
  'package.json',
  'pyproject.toml',
  'setup.py',
  'requirements.txt',
  'Cargo.toml',
  'go.mod',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'Gemfile',
  'composer.json',
  'mix.exs',
  'deno.json',
  'CMakeLists.txt',
  'Makefile',
];

const MAX_ROOMS = 40;
const MAX_TEXT_FILES = 400;
const MAX_TEXT_BYTES = 256 * 1024;
const TEXT_EXTENSIONS: ReadonlySet<string> = new Set(['.md', '.markdown', '.txt', '.rst']);
const BOT = /\[bot\]|\bbot\b|dependabot|renovate|github-actions|greenkeeper|snyk/i;
/** Capitalised words that open lines and follow "by"/"with" but are no one's name. */
const NOT_NAMES: ReadonlySet<string> = new Set(
  'The This That These Those There Then When What Where Which Who Why How And But For From With Without Into Onto Note Notes Warning Error Errors Example Examples Step Steps Todo TODO Usage Output Input Result Results Summary Status User Users Assistant Human System Tool Tools Claude Codex Gemini ChatGPT GPT Copilot Agent Agents Bot Question Answer Answers Tip Tips Info Important Caution Danger See Also Default Defaults Run Running Build Test Tests Fix Fixes Update Updates Add Adds Remove Removes Change Changes Issue Issues Pull Request Requests Release Version Node Python Rust Go Java React Docker Linux Windows Mac Git GitHub GitLab Palace Hub Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October November December Yes No Done Open Closed Ready Blocked Failed Applied Mr Mrs Ms Dr Q A Returns Return Parameters Params Arguments Args Raises Throws Type Types Options Option Required Optional Description Response Body Headers Query Path Method Name Value Key Id Date Time Title Tags Category Priority Severity Goal Goals Context Problem Solution Cause Workaround Expected Actual Environment Platform Source Target Branch Commit Author Owner Reviewer Link Links Reference References Overview Background Details Requirements Install Installation Setup Config Configuration License Contributing Changelog Features Feature Bug Bugs Decision Decisions Action Actions Next Previous Today Yesterday Tomorrow'.split(
    ' ',
  ),
);

export interface DetectedProject {
  /** Folder of the project. */
  path: string;
  /** The wing proposed for it (the folder name, as `palace mine` would default it). */
  wing: string;
  /** Which marker files made it a project. */
  markers: string[];
  /** Rooms proposed as `palace mine` would file its files (plus `general` when files sit at its root). */
  rooms: string[];
}

/** A sub-folder of the scanned folder that was not proposed as a project, and why. */
export interface SkippedFolder {
  path: string;
  reason: 'no_marker' | 'hidden' | 'ignored';
  /** The reason in words. */
  why: string;
}

export interface DetectedPerson {
  name: string;
  /** Where the name was seen: `git` (commit authors) and/or `text` (notes and transcripts). */
  sources: Array<'git' | 'text'>;
  /** How often it was seen (commits plus mentions). */
  count: number;
}

export interface Detection {
  dir: string;
  projects: DetectedProject[];
  /** Sub-folders left out when `dir` holds projects (empty when `dir` itself is the one project). */
  skipped: SkippedFolder[];
  people: DetectedPerson[];
}

/** Commit author names of the repository at `cwd`, or undefined when it is no repository or git is missing. */
export type GitAuthors = (cwd: string) => Promise<string[] | undefined>;

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

function markersOf(dir: string): string[] {
  return PROJECT_MARKERS.filter((m) => existsSync(join(dir, m)));
}

/**
 * The rooms `palace mine` would file a project's files into (its layout rules in walk.ts: first
 * folder, or the sub-folders of one folder that holds most files), `general` last.
 */
export function proposeRooms(project: string): string[] {
  const files = listFiles(project, { extensions: PROJECT_EXTENSIONS, gitignore: true });
  const plan = roomPlan(project, files);
  const rooms = new Set(files.map((f) => projectRoom(project, f, plan)));
  const list = [...rooms].filter((r) => r !== 'general').sort().slice(0, MAX_ROOMS);
  return rooms.has('general') ? [...list, 'general'] : list;
}

const NO_MARKER = `no project marker (${PROJECT_MARKERS.slice(0, 6).join(', ')}, ...)`;

/**
 * The projects in `dir`: `dir` itself when it is one, else its sub-folders that are (the others are
 * listed as skipped, with why); with none, `dir` itself without markers (what `palace mine <dir>`
 * files into one wing anyway).
 */
export function findProjects(dir: string): { projects: DetectedProject[]; skipped: SkippedFolder[] } {
  const at = (path: string, markers: string[]): DetectedProject => ({ path, wing: defaultWing(path), markers, rooms: proposeRooms(path) });
  const own = markersOf(dir);
  if (own.length > 0) return { projects: [at(dir, own)], skipped: [] };
  const projects: DetectedProject[] = [];
  const skipped: SkippedFolder[] = [];
  for (const e of entriesOf(dir)) {
    if (!e.isDirectory()) continue;
    const path = join(dir, e.name);
    if (e.name.startsWith('.') && !SKIP_DIRS.has(e.name)) skipped.push({ path, reason: 'hidden', why: 'hidden folder' });
    else if (SKIP_DIRS.has(e.name)) skipped.push({ path, reason: 'ignored', why: 'dependency, build or cache folder: never mined' });
    else {
      const markers = markersOf(path);
      if (markers.length > 0) projects.push(at(path, markers));
      else skipped.push({ path, reason: 'no_marker', why: NO_MARKER });
    }
  }
  return projects.length > 0 ? { projects, skipped } : { projects: [at(dir, [])], skipped: [] };
}

/**
 * Person-like names in one note or transcript: speaker labels (`Alice:` at line starts, counted only
 * when two or more speakers take turns, as in a transcript) and names after by/with/thanks/cc.
 */
export function namesInText(text: string): string[] {
  const name = "([A-Z][a-z]+(?:[ '-][A-Z][a-z]+)?)";
  const plausible = (candidate: string): boolean => /^[A-Z][a-z]/.test(candidate) && !candidate.split(/[ '-]/).some((w) => NOT_NAMES.has(w));
  const labels = [...text.matchAll(new RegExp(`^(?:>\\s*)?\\*{0,2}${name}\\*{0,2}:[ \\t]+\\S`, 'gm'))].map((m) => m[1] ?? '').filter(plausible);
  const turns = new Map<string, number>();
  for (const l of labels) turns.set(l, (turns.get(l) ?? 0) + 1);
  const speakers = [...turns].filter(([, n]) => n >= 2).map(([l]) => l);
  const alternations = labels.filter((l, i) => i > 0 && l !== labels[i - 1]).length;
  const found = speakers.length >= 2 && alternations >= 2 ? labels.filter((l) => speakers.includes(l)) : [];
  for (const m of text.matchAll(new RegExp(`\\b(?:[Bb]y|[Ww]ith|[Tt]hanks(?: to)?|[Cc]c|[Aa]sked|[Tt]old|[Rr]eviewer|[Oo]wner|[Aa]uthor):?\\s+@?${name}\\b`, 'g')))
    if (plausible(m[1] ?? '')) found.push(m[1] ?? '');
  return found;
}

function textFiles(dir: string): string[] {
  return listFiles(dir, { extensions: TEXT_EXTENSIONS, gitignore: true }).slice(0, MAX_TEXT_FILES);
}

/** Scans `dir` for projects and people. People from text need two mentions to count. */
export async function detect(dir: string, gitAuthors: GitAuthors): Promise<Detection> {
  const { projects, skipped } = findProjects(dir);
  const people = new Map<string, DetectedPerson>();
  const see = (name: string, source: 'git' | 'text', count = 1): void => {
    const key = name.toLowerCase();
    const p = people.get(key) ?? { name, sources: [], count: 0 };
    if (!p.sources.includes(source)) p.sources.push(source);
    p.count += count;
    people.set(key, p);
  };
  const repos = projects.some((p) => p.path === dir) ? projects.map((p) => p.path) : [dir, ...projects.map((p) => p.path)];
  for (const repo of repos) {
    if (!existsSync(join(repo, '.git'))) continue;
    const authors = (await gitAuthors(repo)) ?? [];
    for (const a of authors) {
      const n = a.trim();
      if (n && !BOT.test(n)) see(n, 'git');
    }
  }
  const mentions = new Map<string, number>();
  for (const file of textFiles(dir)) {
    try {
      if (statSync(file).size > MAX_TEXT_BYTES || !TEXT_EXTENSIONS.has(extname(file).toLowerCase())) continue;
      for (const n of namesInText(readFileSync(file, 'utf8'))) mentions.set(n, (mentions.get(n) ?? 0) + 1);
    } catch {
      // unreadable: not a source of names
    }
  }
  for (const [n, count] of mentions) if (count >= 2 || people.has(n.toLowerCase())) see(n, 'text', count);
  return {
    dir,
    projects,
    skipped,
    people: [...people.values()].sort((a, b) => b.count - a.count || a.name.localeCompare(b.name)),
  };
}

/** A short label for a folder in messages. */
export function folderLabel(path: string): string {
  return basename(path) || path;
}
