// The stdio proxy's incremental SSE parser against arbitrary chunking: however the hub's stream is
// cut into network reads (inside a CRLF, inside a multi-byte character, one byte at a time), the
// proxy emits exactly the frames a whole-body parse finds, each as soon as its blank line arrives,
// and never emits a frame the stream ended in the middle of.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { SseDataParser } from '../../cli/stdio-proxy.js';

const newline = fc.constantFrom('\n', '\r\n', '\r');
const payload = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '{', '"', ':', ' ', 'data'), maxLength: 30 });

/** One SSE frame: optional id/event/comment lines, 1-3 data lines, a blank line; all with `nl`. */
const frame = fc.record({
  nl: newline,
  data: fc.array(payload, { minLength: 1, maxLength: 3 }),
  id: fc.option(fc.string({ unit: fc.constantFrom('e', 'v', 't', '_', '1'), maxLength: 8 })),
  comment: fc.boolean(),
});

function render(f: { nl: string; data: string[]; id: string | null; comment: boolean }): string {
  const lines = [...(f.comment ? [': ping'] : []), ...(f.id === null ? [] : [`id: ${f.id}`]), 'event: message', ...f.data.map((d) => `data: ${d}`)];
  return lines.join(f.nl) + f.nl + f.nl;
}

/** Splits bytes at the given cut points and decodes them as a fetch body reader would. */
function chunks(text: string, cuts: number[]): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const decoder = new TextDecoder();
  const out: string[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(decoder.decode(bytes.subarray(from, p), { stream: true }));
    from = p;
  }
  out.push(decoder.decode());
  return out;
}

describe('SseDataParser', () => {
  it('yields every frame, in order, whatever the chunking', () => {
    fc.assert(
      fc.property(fc.array(frame, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 40 }), (frames, cuts) => {
        const parser = new SseDataParser();
        const got: string[] = [];
        for (const chunk of chunks(frames.map(render).join(''), cuts)) got.push(...parser.push(chunk));
        expect(got).toEqual(frames.map((f) => f.data.join('\n')));
        expect(parser.end()).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('emits a frame as soon as its blank line arrives, and never a frame cut off by the end', () => {
    fc.assert(
      fc.property(frame, frame, fc.nat(), (complete, cut, at) => {
        const parser = new SseDataParser();
        expect(parser.push(render(complete))).toEqual([complete.data.join('\n')]);
        const second = render(cut);
        // From inside its first data line up to (not including) its final blank line: incomplete.
        const from = second.indexOf('data:') + 1;
        const to = second.length - cut.nl.length;
        const partial = second.slice(0, from + (at % (to - from + 1)));
        expect(parser.push(partial)).toEqual([]);
        expect(parser.end()).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
