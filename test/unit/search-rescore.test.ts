// The second stage of hybrid search (search/rescore.ts): every candidate scored on both features.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { rescorePool, type PoolCandidate } from '../../hub/src/search/rescore.js';

interface Item {
  id: string;
  useful: boolean | null;
}

const cand = (
  id: string,
  cos: number,
  bm25: number,
  ranks: Record<string, number>,
  useful: boolean | null = null,
): PoolCandidate<Item> => ({
  item: { id, useful },
  cos,
  bm25,
  ranks,
});
const key = (i: Item): string => i.id;
const rating = (i: Item): boolean | null => i.useful;

describe('rescorePool', () => {
  it('scores a candidate one list missed on its real feature, not 0', () => {
    // `b` was found by the vector list only, but its BM25 (asked by id) is the pool's best: it must
    // not rank as if its keyword part were 0 (what fusing the lists did).
    const pool = [
      cand('a', 0.5, 2, { text: 1 }),
      cand('b', 0.6, 9, { vector: 1 }),
      cand('c', 0.4, 1, { vector: 2, text: 2 }),
    ];
    const hits = rescorePool(pool, key, rating);
    expect(hits.map((h) => h.item.id)).toEqual(['b', 'a', 'c']);
    expect(hits[0]?.score).toBe(1);
    // Components read the features under the lists that found the hit; null for a list that did not.
    expect(hits[0]?.components).toEqual({ vector: 1, text: null });
    expect(hits.find((h) => h.item.id === 'a')?.components).toEqual({ vector: null, text: 2 / 9 });
  });

  it('weighs the two features equally after standardising them, whatever their scales', () => {
    // x: the best cosine and the worst BM25; y: the reverse, by as many standard deviations: a tie.
    const pool = (scale: number) => [
      cand('x', 0.9, 1 * scale, { vector: 1 }),
      cand('y', 0.1, 9 * scale, { text: 1 }),
      cand('m', 0.5, 5 * scale, { vector: 2 }),
    ];
    const hits = rescorePool(pool(1), key, rating);
    expect(hits.map((h) => h.score)).toEqual([1, 1, 1]);
    // Ties keep the best source rank, then the key.
    expect(hits.map((h) => h.item.id)).toEqual(['x', 'y', 'm']);
    // BM25 on another scale (a bigger corpus, another field set) changes nothing.
    const scaled = rescorePool(pool(100), key, rating);
    expect(scaled.map((h) => [h.item.id, h.score])).toEqual(hits.map((h) => [h.item.id, h.score]));
    // Better on one feature, equal on the other: first.
    const better = rescorePool([...pool(1), cand('w', 0.9, 5, { vector: 3 })], key, rating);
    expect(better[0]?.item.id).toBe('w');
  });

  it('halves a drawer rated not useful and lifts one rated useful x1.1', () => {
    const plain = rescorePool([cand('a', 0.6, 3, { text: 1 }), cand('b', 0.5, 2, { text: 2 })], key, rating);
    const rated = rescorePool(
      [cand('a', 0.6, 3, { text: 1 }, false), cand('b', 0.5, 2, { text: 2 }, true)],
      key,
      rating,
    );
    expect(rated.find((h) => h.item.id === 'a')?.score).toBeCloseTo(
      (plain.find((h) => h.item.id === 'a')?.score ?? 0) * 0.5,
      12,
    );
    expect(rated.find((h) => h.item.id === 'b')?.score).toBeCloseTo(
      (plain.find((h) => h.item.id === 'b')?.score ?? 0) * 1.1,
      12,
    );
  });

  it('gives scores in (0, 1.1], sorted, for any pool (property)', () => {
    const poolArb = fc.uniqueArray(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 4 }),
        cos: fc.double({ min: -1, max: 1, noNaN: true }),
        bm25: fc.double({ min: 0, max: 50, noNaN: true }),
        useful: fc.constantFrom(null, true, false),
      }),
      { selector: (c) => c.id, maxLength: 30 },
    );
    fc.assert(
      fc.property(poolArb, (raw) => {
        const hits = rescorePool(
          raw.map((c, i) => cand(c.id, c.cos, c.bm25, { vector: i + 1 }, c.useful)),
          key,
          rating,
        );
        expect(hits).toHaveLength(raw.length);
        hits.forEach((h, i) => {
          expect(h.score).toBeGreaterThan(0);
          expect(h.score).toBeLessThanOrEqual(1.1);
          if (i > 0) expect(h.score).toBeLessThanOrEqual(hits[i - 1]?.score ?? Infinity);
        });
      }),
    );
  });
});
