// Deterministic chunking of long text: ~800-character chunks overlapping by 100, broken at a
// paragraph (or line) boundary past the half-way point; tiny tails are merged, never dropped.

export interface Chunk {
  index: number;
  /** Offset of the chunk's first character in the original text. */
  start: number;
  /** Offset one past its last character. */
  end: number;
  text: string;
}

export const CHUNK = { size: 800, overlap: 100, min: 50 } as const;

/** Whether offset `i` falls between the two halves of a surrogate pair (a cut there breaks UTF-8). */
function splitsPair(text: string, i: number): boolean {
  const lo = text.charCodeAt(i);
  const hi = text.charCodeAt(i - 1);
  return lo >= 0xdc00 && lo <= 0xdfff && hi >= 0xd800 && hi <= 0xdbff;
}

export function chunkText(text: string, size: number = CHUNK.size, overlap: number = CHUNK.overlap): Chunk[] {
  if (text.length <= size) return [{ index: 0, start: 0, end: text.length, text }];
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      const window = text.slice(start, end);
      const half = Math.floor(size / 2);
      const para = window.lastIndexOf('\n\n');
      const line = window.lastIndexOf('\n');
      if (para >= half) end = start + para + 2;
      else if (line >= half) end = start + line + 1;
      // A tail shorter than the minimum joins this chunk rather than standing alone.
      if (text.length - end < CHUNK.min) end = text.length;
      else if (splitsPair(text, end)) end += end - 1 > start ? -1 : 1;
    }
    chunks.push({ index: chunks.length, start, end, text: text.slice(start, end) });
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    if (splitsPair(text, next)) next += next - 1 > start ? -1 : 1;
    start = next;
  }
  return chunks;
}

/** Rebuilds the original text from its chunks (in index order), removing the overlaps. */
export function joinChunks(chunks: ReadonlyArray<Pick<Chunk, 'start' | 'text'>>): string {
  let out = '';
  for (const c of chunks) {
    const skip = Math.max(0, out.length - c.start);
    out += c.text.slice(skip);
  }
  return out;
}
