import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { FUSION_METHODS, fuseScored, type FusedHit, type ScoredList } from '../../hub/src/core/fusion.js';

interface Item {
  id: string;
  useful: boolean | null;
}

const item = (id: string, useful: boolean | null = null): Item => ({ id, useful });
const key = (i: Item): string => i.id;
const rating = (i: Item): boolean | null => i.useful;
const order = (fused: ReadonlyArray<FusedHit<Item>>): string[] => fused.map((f) => f.item.id);

/** A ranked list from ids best first, with strictly decreasing scores starting at `top`. */
function scored(ids: readonly string[], top = 1, step = 0.05, rated: (id: string) => boolean | null = () => null): ScoredList<Item> {
  return ids.map((id, i) => ({ item: item(id, rated(id)), score: top - i * step }));
}

/** Distinct ids, 0..n of them, from a small alphabet so the two lists overlap. */
const idList = fc.uniqueArray(fc.constantFrom(...'abcdefghijklmnop'), { maxLength: 12 });
/** Strictly decreasing positive scores of a given length (distinct to 0.01, as real scores are). */
const scoresOf = (n: number) =>
  fc.uniqueArray(fc.integer({ min: 1, max: 3000 }), { minLength: n, maxLength: n }).map((xs) => [...xs].sort((a, b) => b - a).map((x) => x / 100));
const listArb = idList.chain((ids) => scoresOf(ids.length).map((scores) => ids.map((id, i) => ({ item: item(id), score: scores[i] ?? 0 }))));

describe('fuseScored', () => {
  for (const method of FUSION_METHODS) {
    describe(method, () => {
      it('with one list empty, keeps the other list order', () => {
        fc.assert(
          fc.property(listArb, fc.boolean(), (list, vectorEmpty) => {
            const lists = vectorEmpty ? { vector: [], text: list } : { vector: list, text: [] };
            expect(order(fuseScored(lists, key, rating, method))).toEqual(list.map((h) => h.item.id));
          }),
        );
      });

      it('keeps a document that is first in both lists first', () => {
        fc.assert(
          fc.property(listArb, listArb, (v, t) => {
            fc.pre(v.length > 0 && t.length > 0);
            // 'zz-top' sorts after every other id, so a tie would not put it first.
            const top = item('zz-top');
            const vector = [{ item: top, score: (v[0]?.score ?? 0) + 1 }, ...v];
            const text = [{ item: top, score: (t[0]?.score ?? 0) + 1 }, ...t];
            expect(order(fuseScored({ vector, text }, key, rating, method))[0]).toBe('zz-top');
          }),
        );
      });

      it('gives every hit a score in [0, 1] that never increases down the list, and its components', () => {
        fc.assert(
          fc.property(listArb, listArb, (vector, text) => {
            const fused = fuseScored({ vector, text }, key, rating, method);
            expect(new Set(order(fused))).toEqual(new Set([...vector, ...text].map((h) => h.item.id)));
            fused.forEach((f, i) => {
              expect(f.score).toBeGreaterThanOrEqual(0);
              expect(f.score).toBeLessThanOrEqual(1);
              if (i > 0) expect(f.score).toBeLessThanOrEqual(fused[i - 1]?.score ?? Infinity);
              expect(Object.keys(f.components).sort()).toEqual(['text', 'vector']);
              expect(f.components.vector === null).toBe(!vector.some((h) => h.item.id === f.item.id));
              expect(f.components.text === null).toBe(!text.some((h) => h.item.id === f.item.id));
            });
          }),
        );
      });

      it('ranks a drawer rated not useful lower, never dropping it', () => {
        const ids = ['a', 'b', 'c', 'd'];
        const neutral = order(fuseScored({ vector: scored(ids), text: scored(ids) }, key, rating, method));
        const rated = fuseScored({ vector: scored(ids, 1, 0.05, (id) => (id === 'a' ? false : null)), text: scored(ids) }, key, rating, method);
        expect(neutral[0]).toBe('a');
        expect(order(rated)).toHaveLength(4);
        expect(order(rated).indexOf('a')).toBeGreaterThan(0);
      });
    });
  }

  it('returns nothing for no candidates', () => {
    for (const method of FUSION_METHODS) {
      expect(fuseScored({}, key, rating, method)).toEqual([]);
      expect(fuseScored({ vector: [], text: [] }, key, rating, method)).toEqual([]);
    }
  });

  it('counts an item listed twice in one list once, at its best rank', () => {
    const fused = fuseScored({ vector: [...scored(['a', 'b']), { item: item('a'), score: 0.1 }] }, key, rating, 'minmax');
    expect(order(fused)).toEqual(['a', 'b']);
    expect(fused[0]?.ranks).toEqual({ vector: 1 });
  });
});
