// Line-aligned chunking: cuts text into windows of whole lines (preferring a blank line past the
// half-way point), so no chunk starts or ends mid-line. The fallback of the code chunker and the
// chunker of non-code project files. Only a line longer than LONG_LINE is ever cut inside.

import type { SourceChunk } from '../memory/drawers/memory.js';

/** Characters a window aims for; a window never passes it unless one line alone does. */
export const WINDOW_CHARS = 1000;
/** A single line longer than this (minified code, data) is cut into pieces of this size. */
export const LONG_LINE = 4000;

/** Offsets of each line's first character; `starts[n]` = text length (one past the last line). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10 && i + 1 < text.length) starts.push(i + 1);
  starts.push(text.length);
  return starts;
}

/** 1-based number of the line holding `offset`. */
export function lineOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** A contiguous range of whole lines, 0-based rows, inclusive. */
export interface RowRange {
  start: number;
  end: number;
}

/** Last row of `range` that holds more than whitespace (its start when all are blank). */
export function lastTextRow(text: string, starts: readonly number[], range: RowRange): number {
  for (let row = range.end; row > range.start; row--) if (text.slice(starts[row], starts[row + 1]).trim() !== '') return row;
  return range.start;
}

/** Rows [from, to] cut into windows of at most `size` characters of whole lines. */
export function rowWindows(text: string, starts: readonly number[], from: number, to: number, size: number = WINDOW_CHARS): RowRange[] {
  const out: RowRange[] = [];
  const width = (a: number, b: number): number => (starts[b + 1] ?? text.length) - (starts[a] ?? 0);
  let start = from;
  while (start <= to) {
    let end = start;
    while (end < to && width(start, end + 1) <= size) end++;
    if (end < to) {
      // Prefer to end after a blank line in the window's second half (a paragraph or block boundary).
      for (let row = end; row > start && width(start, row) > size / 2; row--)
        if (text.slice(starts[row], starts[row + 1]).trim() === '') {
          end = row;
          break;
        }
    }
    out.push({ start, end });
    start = end + 1;
  }
  return out;
}

/** Source chunks of the given row ranges (consecutive, covering the text); long lines cut at LONG_LINE. */
export function chunksOfRows(text: string, starts: readonly number[], ranges: readonly RowRange[], extra?: (r: RowRange) => Record<string, unknown>): SourceChunk[] {
  const chunks: SourceChunk[] = [];
  for (const r of ranges) {
    const from = starts[r.start] ?? 0;
    const to = starts[r.end + 1] ?? text.length;
    const meta = extra?.(r) ?? {};
    if (to - from > LONG_LINE && r.start === r.end) {
      for (let at = from; at < to; at += LONG_LINE) {
        let end = Math.min(to, at + LONG_LINE);
        const hi = text.charCodeAt(end - 1);
        if (end < to && hi >= 0xd800 && hi <= 0xdbff) end -= 1; // never split a surrogate pair
        chunks.push({ index: chunks.length, start: at, end, text: text.slice(at, end), metadata: { line_start: r.start + 1, line_end: r.start + 1, ...meta } });
        at = end - LONG_LINE;
      }
      continue;
    }
    const last = lastTextRow(text, starts, r);
    chunks.push({ index: chunks.length, start: from, end: to, text: text.slice(from, to), metadata: { line_start: r.start + 1, line_end: last + 1, ...meta } });
  }
  return chunks;
}

/** The whole text in line-aligned windows (non-code files, and code that cannot be parsed). */
export function lineWindowChunks(text: string, size: number = WINDOW_CHARS): SourceChunk[] {
  if (text === '') return [];
  const starts = lineStarts(text);
  return chunksOfRows(text, starts, rowWindows(text, starts, 0, starts.length - 2, size));
}
