import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { FUSION_METHODS, fuseScored, type FusedHit, type ScoredList } from '../../bench/fusion-variants.js';

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
/** Strictly decreasing positive scores of a given length in (0, 1], distinct to 1/3000 as real scores are. */
const scoresOf = (n: number) =>
  fc.uniqueArray(fc.integer({ min: 1, max: 3000 }), { minLength: n, maxLength: n }).map((xs) => [...xs].sort((a, b) => b - a).map((x) => x / 3000));
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

  describe('headroom (the default)', () => {
    it('lets a flat vector list (cosines that hardly differ) weigh little against a clear keyword ranking', () => {
      // Vector: 40 candidates within 0.04 of each other, none in the keyword list.
      const vector = Array.from({ length: 40 }, (_, i) => ({ item: item(`v${String(i).padStart(2, '0')}`), score: 0.52 - i * 0.001 }));
      const text = scored(['t1', 't2', 't3'], 12, 3);
      const fused = fuseScored({ vector, text }, key, rating, 'headroom', 40);
      expect(order(fused).slice(0, 3)).toEqual(['t1', 't2', 't3']);
      expect(fused[0]?.components.text).toBe(1);
      expect(fused[3]?.components.vector).toBeLessThan(0.1);
    });

    it('lifts a vector list\'s clear winner above the lower half of a keyword list it is missing from', () => {
      // The vector list's best stands far above the rest (0.9 against ~0.2); the keyword list is full
      // (40 asked, 40 returned) and does not contain it.
      const vector = [{ item: item('answer'), score: 0.9 }, ...Array.from({ length: 39 }, (_, i) => ({ item: item(`v${i}`), score: 0.25 - i * 0.002 }))];
      const text = Array.from({ length: 40 }, (_, i) => ({ item: item(`t${String(i).padStart(2, '0')}`), score: 5 - i * 0.1 }));
      const ranked = order(fuseScored({ vector, text }, key, rating, 'headroom', 40));
      expect(ranked.indexOf('answer')).toBeLessThan(10);
      expect(ranked.indexOf('answer')).toBeLessThan(ranked.indexOf('t20'));
    });

    it('puts an exhaustive keyword list (fewer hits than asked for) on a floor of 0', () => {
      const fused = fuseScored({ text: [{ item: item('only'), score: 0.7 }] }, key, rating, 'headroom', 40);
      expect(fused[0]?.components.text).toBe(1);
      expect(fused[0]?.score).toBe(1);
      const full = fuseScored({ text: scored(['a', 'b']) }, key, rating, 'headroom', 2);
      expect(full.map((f) => f.components.text)).toEqual([1, 0]);
      const short = fuseScored({ text: scored(['a', 'b']) }, key, rating, 'headroom', 40);
      expect(short[1]?.components.text).toBeCloseTo(0.95 / 1, 12);
    });
  });

  describe('headroom-mnz (the default)', () => {
    it('ranks a drawer both lists found above a stronger keyword match the vector list does not know', () => {
      // A paraphrase: the vector list's best (0.59 against ~0.4) is the keyword list's third;
      // the keyword list's best matched two words and is nowhere in the vector list.
      const vector = [
        { item: item('answer'), score: 0.59 },
        ...Array.from({ length: 19 }, (_, i) => ({ item: item(`v${String(i).padStart(2, '0')}`), score: 0.45 - i * 0.01 })),
      ];
      const text = [
        { item: item('distractor'), score: 3 },
        { item: item('v05'), score: 1.1 },
        { item: item('answer'), score: 0.93 },
      ];
      expect(order(fuseScored({ vector, text }, key, rating, 'headroom-mnz', 20))[0]).toBe('answer');
      expect(order(fuseScored({ vector, text }, key, rating, 'headroom', 20))[0]).toBe('distractor');
    });

    it('keeps a single list in its order (agreement needs two lists)', () => {
      const fused = fuseScored({ vector: scored(['a', 'b', 'c'], 0.6, 0.1), text: [] }, key, rating, 'headroom-mnz', 40);
      expect(order(fused)).toEqual(['a', 'b', 'c']);
    });
  });

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
