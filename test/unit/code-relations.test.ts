// Chunk enrichment (issue 32): each code chunk records the signatures and doc comments of the
// definitions it holds (or the one around it), the names it calls and the definitions of its file
// that call it; content stays verbatim. Parsed with the real tree-sitter grammars.

import { describe, expect, it } from 'vitest';

import { codeChunks } from '../../hub/src/mine/code-chunks.js';
import { docWords } from '../../hub/src/core/search-keywords.js';

const notes = (n: number): string[] => Array.from({ length: n }, (_, i) => `  // Note ${i}: the unit interval keeps readings of different meters comparable when they are summed.`);

/** A JavaScript file: a documented helper, a function calling it, and a long documented method cut into several chunks. */
function jsFile(): string {
  const body = Array.from({ length: 60 }, (_, i) => `    const step${i} = normalise(input, ${i}); total += step${i};`).join('\n');
  return [
    '// Sums things.',
    "'use strict';",
    '',
    '/** Scales a reading to the unit interval. */',
    'function normalise(value, scale) {',
    '  if (!(scale > 0)) return 0;',
    ...notes(8),
    '  return Math.min(Math.max(value, 0), scale) / scale;',
    '}',
    '',
    'function sumAll(readings, scale) {',
    '  let total = 0;',
    ...notes(8),
    '  for (const r of readings) total += normalise(r, scale);',
    '  return total;',
    '}',
    '',
    'class Meter {',
    '  /**',
    '   * Adds up every reading of the input, smallest first.',
    '   */',
    '  accumulate(input) {',
    '    let total = 0;',
    body,
    '    return total;',
    '  }',
    '}',
    '',
  ].join('\n');
}

describe('chunk enrichment', () => {
  it('records signatures, doc comments, calls and in-file callers, and leaves content verbatim', async () => {
    const text = jsFile();
    const { chunks, language } = await codeChunks('meter.js', text);
    expect(language).toBe('javascript');
    expect(chunks.map((c) => c.text).join('')).toBe(text);
    const helper = chunks.find((c) => (c.metadata?.symbols as string[] | undefined)?.includes('normalise'));
    expect(helper?.metadata?.signatures).toEqual(['function normalise(value, scale)']);
    expect(helper?.metadata?.calls).toEqual(['min', 'max']);
    expect(helper?.metadata?.doc).toContain('Scales a reading to the unit interval.');
    // The helper is called from sumAll and from inside Meter.accumulate: its callers in the file.
    expect(helper?.metadata?.callers).toEqual(['sumAll', 'Meter.accumulate']);
    // The long method is cut into several chunks; a chunk from its middle still carries its signature and doc.
    const inner = chunks.filter((c) => !String(c.text).includes('accumulate(input)') && (c.metadata?.symbols as string[] | undefined)?.includes('Meter.accumulate'));
    expect(inner.length).toBeGreaterThan(0);
    for (const c of inner) {
      expect(c.metadata?.signatures).toEqual(['accumulate(input)']);
      expect(c.metadata?.doc).toBe('Adds up every reading of the input, smallest first.');
      expect(c.metadata?.calls).toEqual(['normalise']);
      expect(c.text).not.toContain('Adds up every reading');
    }
    // The keyword text of the doc field: the signature's words, split identifiers, and the doc comment.
    expect(docWords(inner[0]?.metadata ?? {})).toBe('accumulate input Adds up every reading of the input smallest first');
  });

  it('reads a Python docstring as the doc comment and keeps a one-line definition to its head', async () => {
    const py = await codeChunks('low.py', 'def lowest(values):\n    """Return the smallest of the values."""\n    return min(values)\n');
    expect(py.chunks[0]?.metadata).toMatchObject({ signatures: ['def lowest(values)'], doc: 'Return the smallest of the values.', calls: ['min'] });
    const ts = await codeChunks('a.ts', 'export function add(a: number, b: number): number { return sum(a, b); }\n');
    expect(ts.chunks[0]?.metadata?.signatures).toEqual(['function add(a: number, b: number): number']);
    expect(ts.chunks[0]?.metadata?.calls).toEqual(['sum']);
  });

  it('adds nothing to a chunk that holds and sits in no definition', async () => {
    const { chunks } = await codeChunks('c.js', "'use strict';\nconsole.log('hi');\n");
    expect(chunks[0]?.metadata).not.toHaveProperty('signatures');
    expect(chunks[0]?.metadata).not.toHaveProperty('doc');
    expect(chunks[0]?.metadata?.calls).toEqual(['log']);
  });
});
