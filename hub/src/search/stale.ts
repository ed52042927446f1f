// Recall you can trust: a hit from a mined file says where and when it was mined (the file's content
// hash and the mining time, from the mined-files manifest) and whether the file has changed since
// (`stale`). The check is cheap: the file's size and mtime against the manifest's; only when they
// differ is the file read and hashed (an editor that rewrites a file unchanged leaves it fresh).
// A file that is gone is stale. Re-mining the file refreshes its entry, and its hits are fresh again.

import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

/** What the manifest remembers of a mined file. */
export interface MinedEntry {
  sha256: string;
  mined_at: string;
  mtime_ms: number;
  size: number;
}

export interface Provenance {
  /** Content hash (sha256) of the file when it was mined, and when. */
  mined: { sha256: string; at: string } | null;
  /** The file has changed (or is gone) since it was mined: the hit may no longer say what the file says. */
  stale: boolean;
}

const NONE: Provenance = { mined: null, stale: false };

/** Whether the file on disk still is what was mined. */
export function fileChanged(sourceFile: string, entry: MinedEntry): boolean {
  let stat;
  try {
    stat = statSync(sourceFile);
  } catch {
    return true;
  }
  if (stat.size === entry.size && Math.trunc(stat.mtimeMs) === Math.trunc(entry.mtime_ms)) return false;
  if (stat.size !== entry.size) return true;
  try {
    return createHash('sha256').update(readFileSync(sourceFile)).digest('hex') !== entry.sha256;
  } catch {
    return true;
  }
}

/** A checker for one search: each file is looked at once however many of its chunks are hits. */
export function provenanceChecker(entryOf: ((sourceFile: string) => MinedEntry | undefined) | undefined): (sourceFile: string | null) => Provenance {
  const seen = new Map<string, Provenance>();
  return (sourceFile) => {
    if (!sourceFile || !entryOf) return NONE;
    let p = seen.get(sourceFile);
    if (!p) {
      const entry = entryOf(sourceFile);
      p = entry ? { mined: { sha256: entry.sha256, at: entry.mined_at }, stale: fileChanged(sourceFile, entry) } : NONE;
      seen.set(sourceFile, p);
    }
    return p;
  };
}
