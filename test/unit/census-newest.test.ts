// The census's newest rows (wake-up's decisions, diaries and useful rows) are chosen in one pass
// that keeps only the best n: the same rows, in the same order, as filtering, sorting them all
// newest first and cutting at n, ties and odd n included, on seeded random stamps.

import { describe, expect, it } from 'vitest';

import { newestFirst, newestOf, type RowStamp } from '../../hub/src/memory/drawers/placement-census.js';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function stamps(random: () => number, count: number): RowStamp[] {
  const rooms = ['decisions', 'diary', 'notes'];
  return Array.from({ length: count }, (_, i) => ({
    // Few distinct times, so many rows tie on filed_at and are ordered by id; ids unique, some sharing a prefix.
    id: `d${Math.floor(random() * 1e6).toString(36)}-${i}`,
    wing: `w${Math.floor(random() * 3)}`,
    room: rooms[Math.floor(random() * rooms.length)] as string,
    filed_at: `2026-0${1 + Math.floor(random() * 3)}-1${Math.floor(random() * 4)}T10:00:00Z`,
    chunk_index: random() < 0.7 ? 0 : 1,
    useful: random() < 0.2,
  }));
}

const reference = (rows: RowStamp[], keep: (r: RowStamp) => boolean, n: number): RowStamp[] => rows.filter(keep).sort(newestFirst).slice(0, n);

describe('census newestOf', () => {
  it('gives what filter, sort and slice give, for many sizes, filters and n', () => {
    const random = seeded(30);
    const keeps: Array<(r: RowStamp) => boolean> = [
      () => true,
      (r) => r.room === 'decisions' && r.chunk_index === 0,
      (r) => r.useful && r.wing === 'w1',
      () => false,
    ];
    let compared = 0;
    for (const count of [0, 1, 7, 300, 5_000]) {
      const rows = stamps(random, count);
      for (const keep of keeps)
        for (const n of [0, 1, 2, 15, 15.7, 200, 256, 257, 10_000, Number.POSITIVE_INFINITY, -3, Number.NaN]) {
          expect(newestOf(rows, keep, n)).toEqual(reference(rows, keep, n));
          compared++;
        }
    }
    expect(compared).toBe(5 * 4 * 12);
  });

  it('keeps the first-seen row first among rows that compare equal, as the stable sort does', () => {
    // Two rows newestFirst cannot tell apart (same filed_at, ids equal under localeCompare only).
    const a: RowStamp = { id: 'caf\u00e9', wing: 'w', room: 'decisions', filed_at: '2026-01-01T00:00:00Z', chunk_index: 0, useful: false };
    const b: RowStamp = { ...a, id: 'cafe\u0301' };
    expect(newestFirst(a, b)).toBe(0);
    const older: RowStamp = { ...a, id: 'z', filed_at: '2025-01-01T00:00:00Z' };
    for (const rows of [[a, b, older], [b, a, older], [older, b, a]]) {
      expect(newestOf(rows, () => true, 1)).toEqual(reference(rows, () => true, 1));
      expect(newestOf(rows, () => true, 2)).toEqual(reference(rows, () => true, 2));
    }
  });
});
