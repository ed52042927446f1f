// The files of `palace export` and what `palace import` and `palace checkpoint` read: a manifest,
// drawers.jsonl + kg_facts.jsonl (the exact, loadable form) and browsable Markdown (index.md plus
// <wing>/<room>.md quoting each whole drawer verbatim in a fence). Pure file I/O: no tool calls.

import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { joinChunks } from '../hub/src/core/chunk.js';
import { invalid } from '../hub/src/errors.js';
import type { PortableDrawer } from '../hub/src/memory/drawers/memory.js';

export const EXPORT_FILES = { manifest: 'manifest.json', drawers: 'drawers.jsonl', kg: 'kg_facts.jsonl', index: 'index.md' } as const;

/** A wing or room name as one safe path segment: anything but [A-Za-z0-9_ -] and inner dots becomes %XX. */
export function safeSegment(name: string): string {
  const out = Array.from(name)
    .map((ch, i) => (/[A-Za-z0-9_ -]/.test(ch) || (ch === '.' && i > 0) ? ch : Array.from(Buffer.from(ch, 'utf8'), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')))
    .join('');
  return out || '%00';
}

/** Parses a JSON array or JSONL text into values; `field` names the flag in errors. */
export function parseRecords(text: string, field: string): unknown[] {
  const body = text.replace(/^\uFEFF/, '').trim();
  if (body === '') return [];
  if (body.startsWith('[')) {
    try {
      const value = JSON.parse(body) as unknown;
      if (Array.isArray(value)) return value;
    } catch (err) {
      throw invalid(field, `${field} is not a valid JSON array: ${(err as Error).message}`);
    }
  }
  return body.split('\n').flatMap((line, i) => {
    if (line.trim() === '') return [];
    try {
      return [JSON.parse(line) as unknown];
    } catch (err) {
      throw invalid(field, `${field} line ${i + 1} is not JSON: ${(err as Error).message}`);
    }
  });
}

/** Refuses an output directory that holds anything (an export never mixes with other files). */
export function emptyOutputDir(dir: string): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw invalid('out_dir', `cannot use ${dir}: ${(err as Error).message}`);
  }
  if (entries.length > 0) throw invalid('out_dir', `${dir} is not empty; export into a new or empty directory`);
  mkdirSync(dir, { recursive: true });
}

interface WholeDrawer {
  id: string;
  rows: PortableDrawer[];
  content: string;
}

/** Rows grouped into whole drawers (chunks joined in order, overlaps removed), in export order. */
export function wholeDrawers(rows: readonly PortableDrawer[]): WholeDrawer[] {
  const groups = new Map<string, PortableDrawer[]>();
  for (const r of rows) groups.set(r.parent_id ?? r.id, [...(groups.get(r.parent_id ?? r.id) ?? []), r]);
  return [...groups.entries()].map(([id, list]) => {
    const sorted = [...list].sort((a, b) => a.chunk_index - b.chunk_index);
    const content = sorted.length === 1 ? (sorted[0]?.content ?? '') : joinChunks(sorted.map((r) => ({ start: Number(r.metadata.char_start ?? 0), text: r.content })));
    return { id, rows: sorted, content };
  });
}

function fenceFor(content: string): string {
  const longest = Math.max(0, ...Array.from(content.matchAll(/`+/g), (m) => m[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

function drawerMarkdown(d: WholeDrawer): string {
  const head = d.rows[0] as PortableDrawer;
  const { char_start: _s, char_end: _e, chunks: _c, ...metadata } = head.metadata;
  const fence = fenceFor(d.content);
  return [
    `## ${d.id}`,
    '',
    `- filed_at: ${head.filed_at || '(none)'}`,
    `- added_by: ${head.added_by}`,
    ...(head.source_file ? [`- source_file: ${head.source_file}`] : []),
    ...(head.tags.length ? [`- tags: ${head.tags.join(', ')}`] : []),
    ...(head.useful === null ? [] : [`- useful: ${head.useful}`]),
    ...(d.rows.length > 1 ? [`- chunks: ${d.rows.length}`] : []),
    ...(Object.keys(metadata).length ? [`- metadata: \`${JSON.stringify(metadata)}\``] : []),
    '',
    fence,
    d.content.endsWith('\n') ? d.content.slice(0, -1) : d.content,
    fence,
    '',
  ].join('\n');
}

export interface MarkdownSummary {
  wings: number;
  rooms: number;
  files: string[];
}

/** Writes index.md and one <wing>/<room>.md per room. */
export function writeMarkdown(dir: string, rows: readonly PortableDrawer[], header: { exportedAt: string; palace: string }): MarkdownSummary {
  const byPlace = new Map<string, Map<string, PortableDrawer[]>>();
  for (const r of rows) {
    const rooms = byPlace.get(r.wing) ?? new Map<string, PortableDrawer[]>();
    rooms.set(r.room, [...(rooms.get(r.room) ?? []), r]);
    byPlace.set(r.wing, rooms);
  }
  const files: string[] = [];
  const index = [`# Palace export`, '', `Exported ${header.exportedAt} from \`${header.palace}\`.`, ''];
  let roomCount = 0;
  for (const wing of [...byPlace.keys()].sort()) {
    const rooms = byPlace.get(wing) as Map<string, PortableDrawer[]>;
    const wingDir = safeSegment(wing);
    mkdirSync(join(dir, wingDir), { recursive: true });
    index.push(`## ${wing}`, '');
    for (const room of [...rooms.keys()].sort()) {
      const drawers = wholeDrawers(rooms.get(room) ?? []);
      const rel = `${wingDir}/${safeSegment(room)}.md`;
      writeFileSync(join(dir, rel), [`# ${wing} / ${room}`, '', `${drawers.length} drawer${drawers.length === 1 ? '' : 's'}, exported ${header.exportedAt}.`, '', ...drawers.map(drawerMarkdown)].join('\n'));
      files.push(rel);
      roomCount++;
      index.push(`- [${room}](${rel.split('/').map(encodeURIComponent).join('/')}) (${drawers.length} drawer${drawers.length === 1 ? '' : 's'})`);
    }
    index.push('');
  }
  if (byPlace.size === 0) index.push('No drawers.', '');
  writeFileSync(join(dir, EXPORT_FILES.index), index.join('\n'));
  return { wings: byPlace.size, rooms: roomCount, files };
}

/** Writes values as JSON Lines. */
export function writeJsonl(path: string, values: readonly unknown[]): void {
  writeFileSync(path, values.map((v) => JSON.stringify(v) + '\n').join(''));
}
