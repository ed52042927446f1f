// The mined-files manifest (`<palace>/mined-files.json`): per source file its mtime, size, sha256,
// placement and drawer count, so unchanged files are skipped without reading or embedding them.

import { readFileSync, statSync } from 'node:fs';
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
