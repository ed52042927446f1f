// Query expansion from the palace's own code (issue 32, search/expand.ts): words of comments and
// doc comments are associated with the identifier words used in the same chunks by PMI; a query
// word of the descriptions' vocabulary brings in its best identifier word.

import { describe, expect, it } from 'vitest';

import { MIN_PAIR, TermAssociations } from '../../hub/src/search/expand.js';
import { analyzeQuery } from '../../hub/src/search/query.js';

const code = (content: string, doc?: string) => ({ content, metadata: { language: 'typescript', ...(doc ? { doc } : {}) } });

/** `n` chunks that say "credential" in a comment and use findSecret; filler chunks about other things. */
function palace(n: number): TermAssociations {
  const drawers = [
    ...Array.from({ length: n }, (_, i) => code(`// Looks for a credential in the text.\nconst hit${i} = ${['find', 'scan', 'match'][i % 3]}Secret(text${i % 2});`)),
    ...Array.from({ length: 20 }, (_, i) => code(`// Formats the output line.\nconst line${i} = formatRow(cells);`)),
    ...Array.from({ length: 20 }, (_, i) => code(`// Opens the socket for a client.\nconst sock${i} = openSocket(port);`)),
    // Prose drawers (no language) are not code: not read.
    { content: 'credential credential secret', metadata: {} },
  ];
  return TermAssociations.build(drawers);
}

describe('term associations', () => {
  it('bridges a comment word to the identifier word the code uses for it', () => {
    const index = palace(MIN_PAIR + 1);
    expect(index.units).toBe(MIN_PAIR + 1 + 40);
    const words = index.expand(analyzeQuery('what does the credential detector return').stems).map((e) => e.word);
    expect(words).toContain('secret');
    expect(words).not.toContain('format');
    expect(words).not.toContain('socket');
  });

  it('ignores pairs seen in fewer chunks than the reliability floor', () => {
    expect(palace(MIN_PAIR - 1).expand(analyzeQuery('credential detector').stems)).toEqual([]);
  });

  it('does not expand a word the code itself uses as a name as often as in comments', () => {
    // "socket" is both in the comments and in openSocket: its own matches are the evidence.
    const words = palace(MIN_PAIR + 1).expand(analyzeQuery('socket').stems);
    expect(words).toEqual([]);
  });

  it('reads doc comments recorded by the miner as descriptions', () => {
    const drawers = Array.from({ length: MIN_PAIR + 2 }, (_, i) => code(`const v${i} = ${['pick', 'take', 'read'][i % 3]}Min(${['rows', 'cells'][i % 2]});`, 'Picks the lowest entry.'));
    drawers.push(...Array.from({ length: 20 }, (_, i) => code(`// Sends a reply.\nconst r${i} = writeReply(res);`)));
    expect(TermAssociations.build(drawers).expand(analyzeQuery('lowest entry').stems).map((e) => e.word)).toContain('min');
  });
});
