// The mined-files manifest (`<palace>/mined-files.json`): per source file its mtime, size, sha256,
// placement and drawer count, so unchanged files are skipped without reading or embedding them.

import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { writeFileAtomic } from '../atomic-file.js';

export interface MinedFileEntry {
  mtime_ms: number;
  size: number;
  sha256: string;
  wing: string;
  room: string;
  mode: string;
  /** The directory (or file) the mine was started on. */
  root: string;
  drawers: number;
  mined_at: string;
  /** Projects mode: the chunker version the file was cut with (absent: the character windows before it). */
  chunker?: number;
}

export type Manifest = Record<string, MinedFileEntry>;

export function manifestPath(palacePath: string): string {
  return join(palacePath, 'mined-files.json');
}

function parseManifest(path: string): Manifest {
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Manifest) : {};
  } catch {
    return {};
  }
}

/** A parsed manifest and, built on first use, its files by wing. */
interface Parsed {
  mtimeMs: number;
  size: number;
  manifest: Readonly<Manifest>;
  byWing?: Map<string, string[]>;
}

/** The last manifest read per file, with the mtime and size it had: a large one is parsed once. */
const parsed = new Map<string, Parsed>();

function readParsed(palacePath: string): Parsed {
  const path = manifestPath(palacePath);
  let stat;
  try {
    stat = statSync(path);
  } catch {
    parsed.delete(path);
    return { mtimeMs: 0, size: 0, manifest: {} };
  }
  const hit = parsed.get(path);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit;
  const entry: Parsed = { mtimeMs: stat.mtimeMs, size: stat.size, manifest: parseManifest(path) };
  parsed.set(path, entry);
  return entry;
}

/**
 * The manifest, read-only: parsed again only when the file's mtime or size changed (a palace a
 * year old has tens of thousands of entries, megabytes of JSON, and every mine checks it).
 */
export function readManifest(palacePath: string): Readonly<Manifest> {
  return readParsed(palacePath).manifest;
}

/**
 * Parses a manifest's JSON a few hundred entries at a time, handing the event loop back every
 * `sliceMs`: the top-level object is cut at its depth-1 commas (strings skipped), each run of
 * entries parsed by JSON.parse. Throws on text that is not an object (the caller falls back).
 */
async function parseSliced(text: string, sliceMs: number): Promise<Manifest> {
  const out: Manifest = {};
  let i = text.indexOf('{');
  if (i < 0) throw new Error('not an object');
  let slice = performance.now();
  let depth = 1;
  let start = i + 1;
  let entries = 0;
  const flush = (end: number): void => {
    const body = text.slice(start, end).trim();
    if (body !== '') Object.assign(out, JSON.parse(`{${body}}`) as Manifest);
    start = end + 1;
    entries = 0;
  };
  for (i = i + 1; i < text.length && depth > 0; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
      if (depth === 0) flush(i);
    } else if (c === 44 /* , */ && depth === 1 && ++entries >= 500) {
      flush(i);
      if (performance.now() - slice >= sliceMs) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
    }
  }
  if (depth !== 0) throw new Error('unterminated object');
  return out;
}

/**
 * readManifest for a long-running hub: the file read asynchronously and parsed in slices (a palace a
 * year old has megabytes of manifest; one JSON.parse of it held the event loop ~250 ms under load),
 * then cached as readManifest caches it, so the synchronous readers that follow find it parsed.
 */
export async function readManifestSliced(palacePath: string, sliceMs = 8): Promise<Readonly<Manifest>> {
  const path = manifestPath(palacePath);
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return readManifest(palacePath);
  }
  const hit = parsed.get(path);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.manifest;
  let manifest: Manifest;
  try {
    const bytes = await readFile(path);
    // Replaced while it was read: the size no longer matches; the synchronous reader takes over.
    if (bytes.length !== stat.size) return readManifest(palacePath);
    manifest = await parseSliced(bytes.toString('utf8'), sliceMs);
  } catch {
    return readManifest(palacePath);
  }
  const now = parsed.get(path);
  // A synchronous reader may have parsed a newer version meanwhile: keep that one.
  if (now && (now.mtimeMs !== stat.mtimeMs || now.size !== stat.size)) return readManifest(palacePath);
  if (now) return now.manifest;
  parsed.set(path, { mtimeMs: stat.mtimeMs, size: stat.size, manifest });
  return manifest;
}

/** A manifest with its files grouped by wing (a mine looks only at its own wing's entries). */
export interface IndexedManifest {
  manifest: Readonly<Manifest>;
  /** The files whose entry is in `wing`. */
  filesOfWing(wing: string): readonly string[];
}

/** The manifest (as readManifest) and its files by wing, grouped once per version of the file. */
export function readManifestIndexed(palacePath: string): IndexedManifest {
  const p = readParsed(palacePath);
  return {
    manifest: p.manifest,
    filesOfWing: (wing) => {
      if (!p.byWing) {
        const byWing = new Map<string, string[]>();
        for (const file in p.manifest) {
          const w = p.manifest[file]?.wing ?? '';
          const files = byWing.get(w);
          if (files) files.push(file);
          else byWing.set(w, [file]);
        }
        p.byWing = byWing;
      }
      return p.byWing.get(wing) ?? [];
    },
  };
}

/**
 * Merges changes into the manifest on disk (re-read first, so concurrent mines of other roots
 * keep their entries) and writes it atomically. `null` removes an entry.
 */
export function commitManifest(palacePath: string, changes: ReadonlyMap<string, MinedFileEntry | null>): Manifest {
  const current = parseManifest(manifestPath(palacePath));
  for (const [file, entry] of changes) {
    if (entry === null) delete current[file];
    else current[file] = entry;
  }
  const path = manifestPath(palacePath);
  writeFileAtomic(path, JSON.stringify(current));
  return current;
}
