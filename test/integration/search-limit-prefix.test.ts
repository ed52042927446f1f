// Stable results (issue 32): the top k of a search at limit k are the first k of the same search at
// any larger limit, in every mode, so the CLI (limit 5), MCP (10) and the dashboard (20) show one
// order. A real LanceDB palace of 150 drawers; the embedder is a deterministic bag-of-words hash
// (a real Embedder: same text, same unit vector), so the property is about search, not a model.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Embedder } from '../../hub/src/embed/embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { Memory } from '../../hub/src/memory/drawers/memory.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import type { StoredDrawer } from '../../hub/src/vector/vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { wordVector as wordVectorOf } from '../helpers/word-vector.js';

const DIM = 64;
const WORDS = (
  'lease writer hub palace drawer wing room tunnel patch artifact sqlite lancedb vector search embed agent task claimed ready ' +
  'applied failed blocked stream sync peer token deploy database password migration schema index chunk memory diary graph fact'
).split(' ');

const wordVector = (text: string): Float32Array => wordVectorOf(text, DIM);

const hashEmbedder: Embedder = {
  info: () => ({ provider: 'test', model: 'bag-of-words-hash', dimensions: DIM, device: 'cpu' }),
  embed: async (texts) => texts.map(wordVector),
  close: async () => undefined,
};

function drawers(n: number): StoredDrawer[] {
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: n }, (_, i) => {
    const content = `${Array.from({ length: 6 + Math.floor(next() * 20) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ')} note ${i}`;
    return {
      id: `drawer_${i.toString(16).padStart(24, '0')}`,
      wing: `w${i % 3}`,
      room: `r${i % 5}`,
      tags: [],
      content,
      source_file: null,
      chunk_index: 0,
      parent_id: null,
      filed_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      added_by: 'test',
      // A few ratings, so the rating factor is part of the property too.
      useful: i % 11 === 0 ? false : i % 13 === 0 ? true : null,
      metadata: {},
      embedder: `bag-of-words-hash/${DIM}`,
      vector: wordVector(content),
    };
  });
}

describe('search results are stable across limits', () => {
  let dir: TmpDir;
  let store: LanceDbVectorStore;
  let memory: Memory;

  beforeAll(async () => {
    dir = makeTmpDir('search-prefix');
    store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions: DIM, log: silentLogger });
    await store.upsert(drawers(150));
    memory = new Memory({ store, embedder: hashEmbedder });
  });

  afterAll(async () => {
    await store.close();
    dir.cleanup();
  });

  it('the top k at limit k are the first k at any larger limit (hybrid, text, vector)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 100 }),
        fc.constantFrom('hybrid', 'text', 'vector'),
        async (words, k, extra, mode) => {
          const query = words.join(' ');
          const larger = Math.min(100, k + extra);
          const small = await memory.search({ query, limit: k, mode });
          const big = await memory.search({ query, limit: larger, mode });
          const ids = (r: typeof small): string[] => r.results.map((h) => h.drawer_id);
          expect(ids(small), `${mode} '${query}' limit ${k} vs ${larger}`).toEqual(ids(big).slice(0, small.results.length));
          expect(small.results.map((h) => h.score)).toEqual(big.results.slice(0, small.results.length).map((h) => h.score));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a limit past the candidate window still returns that many hits, scores never increasing', async () => {
    const { results } = await memory.search({ query: 'drawer wing room', limit: 90 });
    expect(results.length).toBe(90);
    for (let i = 1; i < results.length; i++) expect(results[i]?.score ?? 0).toBeLessThanOrEqual(results[i - 1]?.score ?? 0);
    // Scores stay in [0, 1] (ratings aside: x1.1 for a drawer rated useful).
    for (const h of results) expect(h.score).toBeLessThanOrEqual(h.useful === true ? 1.1 : 1);
  });
});
