// The mined-files manifest (`<palace>/mined-files.json`): per source file its mtime, size, sha256,
// placement and drawer count, so unchanged files are skipped without reading or embedding them.

import { readFileSync } from 'node:fs';
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

export function readManifest(palacePath: string): Manifest {
  try {
    const value: unknown = JSON.parse(readFileSync(manifestPath(palacePath), 'utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Manifest) : {};
  } catch {
    return {};
  }
}

/**
 * Merges changes into the manifest on disk (re-read first, so concurrent mines of other roots
 * keep their entries) and writes it atomically. `null` removes an entry.
 */
export function commitManifest(palacePath: string, changes: ReadonlyMap<string, MinedFileEntry | null>): Manifest {
  const current = readManifest(palacePath);
  for (const [file, entry] of changes) {
    if (entry === null) delete current[file];
    else current[file] = entry;
  }
  const path = manifestPath(palacePath);
  writeFileAtomic(path, JSON.stringify(current));
  return current;
}
