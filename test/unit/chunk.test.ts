import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { CHUNK, chunkText, joinChunks, type Chunk } from '../../hub/src/core/chunk.js';

/** True when `text` survives a UTF-8 round trip (no lone surrogate halves). */
function wellFormed(text: string): boolean {
  return new TextDecoder().decode(new TextEncoder().encode(text)) === text;
}

/** Checks the invariants every chunking must keep, for any text and sizes. */
function checkChunks(text: string, chunks: Chunk[], size: number): void {
  expect(chunks.length).toBeGreaterThan(0);
  expect(chunks[0]?.start).toBe(0);
  expect(chunks.at(-1)?.end).toBe(text.length);
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.text).toBe(text.slice(c.start, c.end));
    if (text.length > size) expect(c.text.length).toBeLessThanOrEqual(size + CHUNK.min);
    const prev = chunks[i - 1];
    if (prev) {
      expect(c.start).toBeGreaterThan(prev.start); // always progresses
      expect(c.start).toBeLessThanOrEqual(prev.end); // never leaves a gap
      expect(c.end).toBeGreaterThan(prev.end);
    }
  });
}

const prose = (n: number): string =>
  Array.from({ length: n }, (_, i) => `Sentence ${i} about the storage layer and its trade-offs.`).join(' ');

describe('chunkText', () => {
  it('keeps text up to the chunk size as one chunk, including the empty string', () => {
    for (const text of ['', 'short', 'x'.repeat(CHUNK.size)]) {
      expect(chunkText(text)).toEqual([{ index: 0, start: 0, end: text.length, text }]);
    }
  });

  it('splits long text into overlapping chunks of about the chunk size', () => {
    const text = 'y'.repeat(3000);
    const chunks = chunkText(text);
    checkChunks(text, chunks, CHUNK.size);
    expect(chunks.length).toBeGreaterThan(3);
    const [first, second] = chunks;
    expect(first?.text.length).toBe(CHUNK.size);
    expect(second?.start).toBe(CHUNK.size - CHUNK.overlap);
  });

  it('breaks at a paragraph boundary past the half-way point when there is one', () => {
    const para = (ch: string, n: number): string => ch.repeat(n);
    const text = `${para('a', 600)}\n\n${para('b', 600)}\n\n${para('c', 600)}`;
    const chunks = chunkText(text);
    checkChunks(text, chunks, CHUNK.size);
    expect(chunks[0]?.text).toBe(`${para('a', 600)}\n\n`);
    expect(chunks[0]?.text.endsWith('\n\n')).toBe(true);
  });

  it('falls back to a line boundary, and ignores breaks before the half-way point', () => {
    const line = `${'a'.repeat(700)}\n${'b'.repeat(700)}`;
    expect(chunkText(line)[0]?.text).toBe(`${'a'.repeat(700)}\n`);
    const early = `${'a'.repeat(100)}\n\n${'b'.repeat(1500)}`;
    expect(chunkText(early)[0]?.text.length).toBe(CHUNK.size);
  });

  it('merges a tail shorter than the minimum into the last chunk instead of dropping or isolating it', () => {
    const text = 'z'.repeat(CHUNK.size + CHUNK.min - 1);
    expect(chunkText(text)).toHaveLength(1);
    const longer = 'z'.repeat(CHUNK.size + CHUNK.min);
    const chunks = chunkText(longer);
    expect(chunks).toHaveLength(2);
    expect(chunks.at(-1)?.text.length).toBeGreaterThanOrEqual(CHUNK.min);
  });

  it('rebuilds the original exactly from its chunks', () => {
    const text = `${prose(60)}\n\n${prose(40)}\r\n${prose(25)}\n`;
    expect(joinChunks(chunkText(text))).toBe(text);
  });

  it('never cuts a surrogate pair in half, so every chunk is valid UTF-8', () => {
    // An emoji straddles each candidate boundary: at the chunk end and at the overlap start.
    for (let shift = 0; shift < 4; shift++) {
      const text = `${'a'.repeat(CHUNK.size - 1 - shift)}${'🙂'.repeat(400)}`;
      const chunks = chunkText(text);
      checkChunks(text, chunks, CHUNK.size);
      for (const c of chunks) expect(wellFormed(c.text), `chunk ${c.index} at shift ${shift}`).toBe(true);
      expect(joinChunks(chunks)).toBe(text);
    }
  });

  describe('properties', () => {
    const sizes = fc.record({
      size: fc.integer({ min: 2, max: 120 }),
      overlap: fc.integer({ min: 0, max: 60 }),
    });

    it('joinChunks(chunkText(s)) === s for arbitrary strings and sizes', () => {
      fc.assert(
        fc.property(
          fc.string({ unit: 'binary', maxLength: 600, size: 'large' }),
          sizes,
          (text, { size, overlap }) => {
            expect(joinChunks(chunkText(text, size, overlap))).toBe(text);
          },
        ),
        { numRuns: 200 },
      );
    });

    it('joinChunks(chunkText(s)) === s with the default sizes on long multi-line text', () => {
      const line = fc.string({ unit: 'grapheme', maxLength: 120 });
      fc.assert(
        fc.property(
          fc.array(line, { minLength: 5, maxLength: 60 }),
          fc.constantFrom('\n', '\n\n', '\r\n', ' '),
          (lines, sep) => {
            const text = lines.join(sep);
            const chunks = chunkText(text);
            checkChunks(text, chunks, CHUNK.size);
            expect(joinChunks(chunks)).toBe(text);
          },
        ),
        { numRuns: 200 },
      );
    });

    it('chunks cover the text in order, progress, overlap without gaps and stay at most size + min long', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 800, size: 'large' }), sizes, (text, { size, overlap }) => {
          checkChunks(text, chunkText(text, size, overlap), size);
        }),
        { numRuns: 200 },
      );
    });

    it('keeps well-formed text well-formed in every chunk', () => {
      const unit = fc.oneof(
        fc.constantFrom('a', ' ', '\n', 'é', '🙂', '𝄞', '👩‍💻'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      );
      fc.assert(
        fc.property(
          fc.string({ unit, minLength: 20, maxLength: 300, size: 'large' }),
          sizes,
          (text, { size, overlap }) => {
            const chunks = chunkText(text, size, overlap);
            for (const c of chunks) expect(wellFormed(c.text)).toBe(true);
            expect(joinChunks(chunks)).toBe(text);
          },
        ),
        { numRuns: 200 },
      );
    });

    it('is deterministic: the same text always gives the same chunks', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 4000, size: 'large' }), (text) => {
          expect(chunkText(text)).toEqual(chunkText(text));
        }),
        { numRuns: 100 },
      );
    });
  });
});

describe('joinChunks', () => {
  it('joins nothing into the empty string and one chunk into itself', () => {
    expect(joinChunks([])).toBe('');
    expect(joinChunks([{ start: 0, text: 'abc' }])).toBe('abc');
  });

  it('drops exactly the overlap of each following chunk', () => {
    expect(
      joinChunks([
        { start: 0, text: 'hello wor' },
        { start: 6, text: 'world, agai' },
        { start: 13, text: 'again!' },
      ]),
    ).toBe('hello world, again!');
  });
});
