// The path candidate source of search: the query's words against the words of every mined project
// file's path (folders, file stem; identifiers split at camelCase, `-`, `_`, `.`), compared by light
// stems with a prefix of at least 3 letters for morphology ("balancing" meets `balanced-pool.js`).
// A file scores the BM25 weight (idf over the files) of each query word its path holds, so a word
// every path shares (`lib`, `src`) weighs next to nothing. The index is built once per mined-files
// list (the manifest, parsed once per change) and costs a pass over the distinct path words per query.

import { identifierParts, isStopword, stem, stemsMeet } from './query.js';

/** One mined file as search sees it. */
export interface MinedFile {
  /** The drawer's `source_file` (absolute path as mined). */
  source_file: string;
  /** The path relative to the mined root (`/`-separated). */
  rel_path: string;
  /** How many drawers (chunks) it was filed as. */
  drawers: number;
}

interface PathIndex {
  files: readonly MinedFile[];
  /** Distinct path-word stems → the files (indexes) holding them. */
  byStem: Map<string, number[]>;
}

const FILE_EXTENSION = /\.[A-Za-z0-9]{1,8}$/;

/** The stems of a path's words: every folder and the file name without its extension, split as identifiers. */
export function pathStems(relPath: string): string[] {
  const segments = relPath.split('/').filter((s) => s !== '');
  const last = segments.pop();
  if (last !== undefined) segments.push(last.replace(FILE_EXTENSION, ''));
  const out = new Set<string>();
  for (const seg of segments)
    for (const part of identifierParts(seg)) {
      const w = part.toLowerCase();
      if (w.length >= 2 && !/^\d+$/.test(w) && !isStopword(w)) out.add(stem(w));
    }
  return [...out];
}

/** The index of the last files list asked about (the manifest's list changes only when it is re-read). */
let lastIndex: PathIndex | undefined;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Indexes files [from, to) into byStem. */
function indexRange(files: readonly MinedFile[], byStem: Map<string, number[]>, from: number, to: number): void {
  for (let i = from; i < to; i++)
    for (const s of pathStems((files[i] as MinedFile).rel_path)) {
      const list = byStem.get(s);
      if (list) list.push(i);
      else byStem.set(s, [i]);
    }
}

function indexOf(files: readonly MinedFile[]): PathIndex {
  let index = lastIndex?.files === files ? lastIndex : undefined;
  if (!index) {
    const byStem = new Map<string, number[]>();
    indexRange(files, byStem, 0, files.length);
    index = { files, byStem };
    lastIndex = index;
  }
  return index;
}

/**
 * The mined project files of a manifest and their path index, built ahead of search in slices
 * that hand the event loop back every `sliceMs` (a palace a year old lists tens of thousands of
 * files: built in one go, the first search held the loop for hundreds of ms). Search then finds
 * both cached (same manifest object, same list).
 */
export async function warmMinedFiles(manifest: Readonly<Record<string, { mode: string; root: string; drawers: number }>>, sliceMs = 8): Promise<readonly MinedFile[]> {
  let files = lastManifest?.manifest === manifest ? lastManifest.files : undefined;
  let slice = performance.now();
  const pause = async (): Promise<void> => {
    if (performance.now() - slice < sliceMs) return;
    await yieldToLoop();
    slice = performance.now();
  };
  if (!files) {
    const built: MinedFile[] = [];
    let n = 0;
    for (const file in manifest) {
      const entry = manifest[file];
      if (entry) {
        const f = minedFile(file, entry);
        if (f) built.push(f);
      }
      if (++n % 256 === 0) await pause();
    }
    // Another caller may have built it meanwhile: keep one list per manifest.
    if (lastManifest?.manifest === manifest) return lastManifest.files;
    files = built;
    lastManifest = { manifest, files };
  }
  if (lastIndex?.files !== files) {
    const byStem = new Map<string, number[]>();
    for (let at = 0; at < files.length; at += 256) {
      indexRange(files, byStem, at, Math.min(files.length, at + 256));
      await pause();
    }
    if (lastManifest?.files === files) lastIndex = { files, byStem };
  }
  return files;
}

export interface PathMatch {
  file: MinedFile;
  /** Sum of the BM25 idf of the query stems the path holds. */
  score: number;
  /** The query stems it holds. */
  matched: string[];
}

/** Files whose path words meet the query's stems, best first (ties by path); at most `limit`. */
export function pathScan(files: readonly MinedFile[], queryStems: readonly string[], limit: number): PathMatch[] {
  if (files.length === 0 || queryStems.length === 0) return [];
  const index = indexOf(files);
  const n = files.length;
  const scores = new Map<number, { score: number; matched: string[] }>();
  for (const q of new Set(queryStems)) {
    const holders = new Set<number>();
    for (const [s, list] of index.byStem) if (stemsMeet(q, s)) for (const i of list) holders.add(i);
    if (holders.size === 0 || holders.size === n) continue;
    const idf = Math.log(1 + (n - holders.size + 0.5) / (holders.size + 0.5));
    for (const i of holders) {
      const e = scores.get(i) ?? { score: 0, matched: [] };
      e.score += idf;
      e.matched.push(q);
      scores.set(i, e);
    }
  }
  return [...scores.entries()]
    .map(([i, e]) => ({ file: files[i] as MinedFile, score: e.score, matched: e.matched }))
    .sort((a, b) => b.score - a.score || (a.file.rel_path < b.file.rel_path ? -1 : a.file.rel_path > b.file.rel_path ? 1 : 0))
    .slice(0, limit);
}

/** A manifest entry as search sees it; undefined for a file not mined in projects mode. */
function minedFile(file: string, entry: { mode: string; root: string; drawers: number }): MinedFile | undefined {
  if (entry.mode !== 'projects') return undefined;
  const root = entry.root.replace(/\\/g, '/').replace(/\/+$/, '');
  const path = file.replace(/\\/g, '/');
  const rel = path.startsWith(`${root}/`) ? path.slice(root.length + 1) : (path.split('/').pop() ?? path);
  return { source_file: file, rel_path: rel, drawers: entry.drawers };
}

/** The files of the last manifest object read (a manifest is parsed once per change). */
let lastManifest: { manifest: object; files: MinedFile[] } | undefined;

/**
 * The mined project files of a manifest (`<palace>/mined-files.json`, parsed once per change), with
 * their paths relative to the folder each was mined from. Only projects-mode files: a conversation's
 * file name says nothing about its content.
 */
export function minedProjectFiles(manifest: Readonly<Record<string, { mode: string; root: string; drawers: number }>>): readonly MinedFile[] {
  let files = lastManifest?.manifest === manifest ? lastManifest.files : undefined;
  if (!files) {
    files = [];
    for (const [file, entry] of Object.entries(manifest)) {
      const f = minedFile(file, entry);
      if (f) files.push(f);
    }
    lastManifest = { manifest, files };
  }
  return files;
}
