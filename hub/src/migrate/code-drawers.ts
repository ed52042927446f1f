// `palace migrate` for drawers mined before code-aware chunking: project files whose drawers lack
// `rel_path` (the mark of the current chunker) are re-mined in place when the file still exists
// unchanged (same sha256), so they get syntax-aligned chunks, line ranges, symbols and a relative
// path. Changed or vanished files are left alone and counted (the next `palace mine` re-chunks them).

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, sep } from 'node:path';

import type { Memory } from '../memory/drawers/memory.js';
import { readManifest } from '../mine/manifest.js';
import { mineSource } from '../mine/miner.js';

export interface RechunkReport {
  /** Mined project files whose drawers predate code-aware chunking. */
  files_old: number;
  /** Of those, re-chunked now (or, dry, that would be). */
  files_rechunked: number;
  /** Changed since mined (sha256 differs): left for the next `palace mine`. */
  files_changed: number;
  /** No longer on disk: their drawers stay as they are. */
  files_gone: number;
  drawers_filed: number;
  drawers_removed: number;
}

interface OldFile {
  file: string;
  sha256: string | undefined;
  wing: string;
  room: string;
}

function sha256Of(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

/** The mined project files whose drawers have no `rel_path` (chunked by the old character windows). */
async function oldProjectFiles(memory: Memory): Promise<OldFile[]> {
  const rows = await memory.scanDrawers({}, { columns: ['source_file', 'metadata', 'wing', 'room'] });
  const files = new Map<string, OldFile>();
  for (const r of rows) {
    if (!r.source_file || r.metadata.mode !== 'projects' || typeof r.metadata.rel_path === 'string') continue;
    if (files.has(r.source_file)) continue;
    const sha = typeof r.metadata.source_sha256 === 'string' ? r.metadata.source_sha256 : undefined;
    files.set(r.source_file, { file: r.source_file, sha256: sha, wing: r.wing, room: r.room });
  }
  return [...files.values()];
}

/** Re-chunks the old project drawers of files still unchanged on disk; a dry run only counts them. */
export async function rechunkProjectDrawers(memory: Memory, palacePath: string, dryRun: boolean): Promise<RechunkReport> {
  const report: RechunkReport = { files_old: 0, files_rechunked: 0, files_changed: 0, files_gone: 0, drawers_filed: 0, drawers_removed: 0 };
  const old = await oldProjectFiles(memory);
  report.files_old = old.length;
  const manifest = readManifest(palacePath);
  // Grouped by the folder they were mined from and their current place (a moved drawer stays moved).
  const groups = new Map<string, { root: string; wing: string; room: string; files: Set<string> }>();
  for (const f of old) {
    if (!existsSync(f.file)) {
      report.files_gone++;
      continue;
    }
    if (f.sha256 === undefined || sha256Of(f.file) !== f.sha256) {
      report.files_changed++;
      continue;
    }
    const minedFrom = manifest[f.file]?.root;
    const root = minedFrom && existsSync(minedFrom) && statSync(minedFrom).isDirectory() && f.file.startsWith(minedFrom + sep) ? minedFrom : dirname(f.file);
    const key = `${root}\u0000${f.wing}\u0000${f.room}`;
    const group = groups.get(key) ?? { root, wing: f.wing, room: f.room, files: new Set<string>() };
    group.files.add(f.file);
    groups.set(key, group);
    report.files_rechunked++;
  }
  if (dryRun) return report;
  const direct = <T>(fn: () => Promise<T>): Promise<T> => fn();
  for (const g of groups.values()) {
    // Only these files (and the folders leading to them) are read; nothing else under the root.
    const folders = new Set<string>();
    for (const file of g.files) for (let d = dirname(file); d.length > g.root.length; d = dirname(d)) folders.add(d);
    const mined = await mineSource(
      async () => memory,
      palacePath,
      { path: g.root, mode: 'projects', wing: g.wing, room: g.room, force: true, gitignore: false, admit: (p) => g.files.has(p) || folders.has(p) },
      { step: direct },
    );
    report.drawers_filed += mined.drawers_filed;
    report.drawers_removed += mined.drawers_removed;
  }
  return report;
}
