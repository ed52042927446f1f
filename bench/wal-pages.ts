// Where the WAL bytes of a measured stretch go: each frame of the `-wal` file names the page it holds
// (its header's first 4 bytes); dbstat maps every page of the file to the table or index it belongs
// to. Counted frames, not distinct pages: a page rewritten by 16 commits is 16 frames of WAL.

import { readFileSync } from 'node:fs';

import type Database from 'better-sqlite3';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Frames of the WAL by b-tree name ('page 1' for the header page, 'free' for pages no b-tree holds now). */
export function walFramesByTree(db: Database.Database, file: string): Map<string, number> {
  const wal = readFileSync(`${file}-wal`);
  const counts = new Map<string, number>();
  if (wal.length < WAL_HEADER) return counts;
  const pageSize = wal.readUInt32BE(8);
  const owner = new Map<number, string>();
  for (const row of db.prepare('SELECT name, pageno FROM dbstat').all() as Array<{ name: string; pageno: number }>) owner.set(row.pageno, row.name);
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
    const page = wal.readUInt32BE(at);
    const name = page === 1 ? 'page 1' : (owner.get(page) ?? 'free');
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/** "name 0.81, name 0.66, ..." pages per event, largest first, those of at least 0.05. */
export function describeFrames(counts: ReadonlyMap<string, number>, events: number): string {
  return [...counts]
    .map(([name, frames]) => [name, frames / events] as const)
    .filter(([, perEvent]) => perEvent >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([name, perEvent]) => `${name} ${perEvent.toFixed(2)}`)
    .join(', ');
}
