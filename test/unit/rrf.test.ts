import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { fuse, RRF_K } from '../../hub/src/core/rrf.js';

interface Item {
  id: string;
  useful: boolean | null;
}

const item = (id: string, useful: boolean | null = null): Item => ({ id, useful });
const key = (i: Item): string => i.id;
const rating = (i: Item): boolean | null => i.useful;
const order = (fused: ReadonlyArray<{ item: Item }>): string[] => fused.map((f) => f.item.id);

describe('fuse (reciprocal rank fusion)', () => {
  it('keeps the order of a single list with scores 1/(k + rank)', () => {
    const fused = fuse({ vector: [item('a'), item('b'), item('c')] }, key, rating);
    expect(order(fused)).toEqual(['a', 'b', 'c']);
    expect(fused.map((f) => f.score)).toEqual([1 / (RRF_K + 1), 1 / (RRF_K + 2), 1 / (RRF_K + 3)]);
    expect(fused.map((f) => f.ranks)).toEqual([{ vector: 1 }, { vector: 2 }, { vector: 3 }]);
  });

  it('sums an item found by both lists and ranks it above items found by one', () => {
    const fused = fuse({ vector: [item('a'), item('b')], text: [item('c'), item('b')] }, key, rating);
    expect(order(fused)[0]).toBe('b');
    expect(fused[0]?.score).toBeCloseTo(2 / (RRF_K + 2), 12);
    expect(fused[0]?.ranks).toEqual({ vector: 2, text: 2 });
    expect(order(fused)).toHaveLength(3);
  });

  it('ranks a not-useful item lower but never drops it', () => {
    const fused = fuse({ vector: [item('bad', false), item('ok')] }, key, rating);
    expect(order(fused)).toEqual(['ok', 'bad']);
    expect(fused[1]?.score).toBeCloseTo(0.5 / (RRF_K + 1), 12);
  });

  it('lifts an item rated useful a little, enough to pass an equal neighbour', () => {
    const fused = fuse(
      { vector: [item('a'), item('b', true)], text: [item('b', true), item('a')] },
      key,
      rating,
    );
    expect(order(fused)).toEqual(['b', 'a']);
    expect((fused[0]?.score ?? 0) / (fused[1]?.score ?? 1)).toBeCloseTo(1.1, 12);
  });

  it('does not let a mild useful lift overturn a clear lead', () => {
    const vector = Array.from({ length: 40 }, (_, i) => item(`v${i}`));
    vector.push(item('late', true));
    const fused = fuse({ vector, text: [item('v0')] }, key, rating);
    expect(order(fused)[0]).toBe('v0');
    // 1.1 / (k + 41) lands between the items at ranks 31 and 40, not near the top.
    expect(order(fused).indexOf('late')).toBeGreaterThan(order(fused).indexOf('v30'));
    expect(order(fused).indexOf('late')).toBeLessThan(order(fused).indexOf('v39'));
  });

  it('breaks score ties by key, so the order is deterministic', () => {
    const fused = fuse({ vector: [item('z'), item('m')], text: [item('m'), item('z')] }, key, rating);
    expect(order(fused)).toEqual(['m', 'z']);
  });

  it('handles empty lists and no lists', () => {
    expect(fuse({}, key, rating)).toEqual([]);
    expect(fuse({ vector: [], text: [] }, key, rating)).toEqual([]);
    expect(order(fuse({ vector: [], text: [item('x')] }, key, rating))).toEqual(['x']);
  });

  describe('properties', () => {
    const ids = fc.uniqueArray(fc.constantFrom(...'abcdefghijklmnop'.split('')), { maxLength: 16 });
    const ratingOf = fc.func(fc.constantFrom<boolean | null>(true, false, null));

    it('returns every distinct item exactly once, best score first', () => {
      fc.assert(
        fc.property(ids, ids, ratingOf, (v, t, rate) => {
          const rated = (id: string): Item => item(id, rate(id));
          const fused = fuse({ vector: v.map(rated), text: t.map(rated) }, key, rating);
          expect(order(fused).sort()).toEqual([...new Set([...v, ...t])].sort());
          for (let i = 1; i < fused.length; i++)
            expect(fused[i - 1]?.score ?? 0).toBeGreaterThanOrEqual(fused[i]?.score ?? 0);
        }),
      );
    });

    it('scores an unrated item as the sum of 1/(k + rank) over the lists it appears in', () => {
      fc.assert(
        fc.property(ids, ids, (v, t) => {
          const fused = fuse({ vector: v.map((id) => item(id)), text: t.map((id) => item(id)) }, key, rating);
          for (const f of fused) {
            const expected = [v, t].reduce((sum, list) => {
              const at = list.indexOf(f.item.id);
              return at < 0 ? sum : sum + 1 / (RRF_K + at + 1);
            }, 0);
            expect(f.score).toBeCloseTo(expected, 12);
          }
        }),
      );
    });

    it('never ranks a not-useful item above the same item unrated', () => {
      fc.assert(
        fc.property(
          ids.filter((l) => l.length > 1),
          fc.nat(),
          (v, pick) => {
            const target = v[pick % v.length] ?? '';
            const neutral = order(fuse({ vector: v.map((id) => item(id)) }, key, rating)).indexOf(target);
            const demoted = order(
              fuse({ vector: v.map((id) => item(id, id === target ? false : null)) }, key, rating),
            ).indexOf(target);
            expect(demoted).toBeGreaterThanOrEqual(neutral);
            expect(demoted).toBeGreaterThanOrEqual(0);
          },
        ),
      );
    });
  });
});
