// Reciprocal rank fusion of several ranked lists into one, with a rating adjustment: a drawer
// rated not useful ranks lower (never disappears); one rated useful ranks a little higher.

export const RRF_K = 60;

export interface Fused<T> {
  item: T;
  score: number;
  /** Rank (1-based) in each input list where the item appeared. */
  ranks: Record<string, number>;
}

export function fuse<T>(lists: Record<string, readonly T[]>, key: (item: T) => string, rating: (item: T) => boolean | null): Fused<T>[] {
  const byKey = new Map<string, Fused<T>>();
  for (const [name, list] of Object.entries(lists)) {
    list.forEach((item, i) => {
      const k = key(item);
      const entry = byKey.get(k) ?? { item, score: 0, ranks: {} };
      entry.score += 1 / (RRF_K + i + 1);
      entry.ranks[name] = i + 1;
      byKey.set(k, entry);
    });
  }
  const out = [...byKey.values()];
  for (const entry of out) {
    const r = rating(entry.item);
    if (r === false) entry.score *= 0.5;
    else if (r === true) entry.score *= 1.1;
  }
  return out.sort((a, b) => b.score - a.score || key(a.item).localeCompare(key(b.item)));
}
