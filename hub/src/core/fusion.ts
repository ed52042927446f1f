// Fusion of scored candidate lists (vector similarity, full-text BM25) into one ranking with one
// readable score per hit and its per-list components. Search uses one scheme, `headroom-mnz`
// (docs/retrieval.md); the other schemes the retrieval bench compares live in bench/fusion-variants.ts
// and plug in through `FusionScheme`.

/** A candidate list: best first, `score` higher = better (cosine similarity, BM25, ...). */
export type ScoredList<T> = ReadonlyArray<{ item: T; score: number }>;

export interface FusedHit<T> {
  item: T;
  /** The fused score, in [0, 1] before the rating adjustment; the list is sorted by it. */
  score: number;
  /** Each list's normalised contribution (null: the item was not in that list). */
  components: Record<string, number | null>;
  /** Rank (1-based) in each list where the item appeared. */
  ranks: Record<string, number>;
}

/**
 * How lists are fused: each list's scores mapped into [0, 1] (`normalise`, same order; `exhaustive`:
 * the list holds every match, so its floor is 0), an optional per-list weight for the mean, and
 * whether the fused score is multiplied by the share of lists that found the drawer (CombMNZ).
 */
export interface FusionScheme {
  normalise: (scores: readonly number[], list: string, exhaustive: boolean) => number[];
  weight?: (scores: readonly number[]) => number;
  combMnz: boolean;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Lists whose score has a fixed ceiling (cosine similarity: 1); others are scaled by their best. */
const CEILINGS: Readonly<Record<string, number>> = { vector: 1 };

/**
 * `headroom`: a cosine counts by how far it stands above the candidates' average similarity, as a
 * share of the way to a perfect match, so a flat (uninformative) vector list weighs little; BM25 is
 * scaled between the list's floor and its best.
 */
export function headroom(scores: readonly number[], name: string, exhaustive: boolean): number[] {
  if (scores.length === 0) return [];
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  const ceiling = CEILINGS[name];
  if (ceiling !== undefined) {
    const m = mean(scores);
    return scores.map((s) => (ceiling > m ? clamp01((s - m) / (ceiling - m)) : 1));
  }
  const floor = exhaustive ? Math.min(0, min) : min;
  return scores.map((s) => (max === floor ? 1 : (s - floor) / (max - floor)));
}

/** The scheme search uses: headroom scaling, times the share of lists that found the drawer. */
export const HEADROOM_MNZ: FusionScheme = { normalise: headroom, combMnz: true };

/**
 * Fuses scored lists: every item gets each list's normalised score (0 where absent), the fused
 * score is their mean (weighted when the scheme weighs lists); with CombMNZ (the default scheme)
 * it is multiplied by the share of the lists that found the drawer, so agreement counts. A drawer rated not useful ranks lower
 * (score halved), one rated useful a little higher (x1.1). Equal scores keep the best list rank.
 */
export function fuseScored<T>(
  lists: Record<string, ScoredList<T>>,
  key: (item: T) => string,
  rating: (item: T) => boolean | null,
  scheme: FusionScheme = HEADROOM_MNZ,
  /** How many candidates were asked of each list (a shorter list is exhaustive). */
  pool = Infinity,
): FusedHit<T>[] {
  const names = Object.keys(lists).filter((n) => (lists[n]?.length ?? 0) > 0);
  const weights = new Map<string, number>();
  for (const name of names) weights.set(name, scheme.weight ? scheme.weight((lists[name] ?? []).map((h) => h.score)) : 1);
  let total = [...weights.values()].reduce((a, b) => a + b, 0);
  if (total === 0) {
    for (const name of names) weights.set(name, 1);
    total = names.length;
  }
  const byKey = new Map<string, FusedHit<T>>();
  for (const name of names) {
    const list = lists[name] ?? [];
    const norm = list.length === 0 ? [] : scheme.normalise(list.map((h) => h.score), name, list.length < pool);
    list.forEach((h, i) => {
      const k = key(h.item);
      let entry = byKey.get(k);
      if (!entry) {
        entry = { item: h.item, score: 0, components: Object.fromEntries(Object.keys(lists).map((n) => [n, null])), ranks: {} };
        byKey.set(k, entry);
      }
      if (entry.ranks[name] !== undefined) return;
      const value = norm[i] ?? 0;
      entry.components[name] = value;
      entry.ranks[name] = i + 1;
      entry.score += ((weights.get(name) ?? 0) / total) * value;
    });
  }
  const out = [...byKey.values()];
  // A weighted mean of parts in [0, 1] is at most 1; summing the shares can overshoot by a rounding step.
  for (const entry of out) entry.score = Math.min(1, entry.score);
  // CombMNZ: a drawer found by several lists counts their agreement (x the share of lists that found it).
  if (scheme.combMnz && names.length > 1) for (const entry of out) entry.score *= Object.keys(entry.ranks).length / names.length;
  for (const entry of out) {
    const r = rating(entry.item);
    if (r === false) entry.score *= 0.5;
    else if (r === true) entry.score *= 1.1;
  }
  // Equal scores (e.g. several candidates at a list's floor) keep their best list rank, then the key.
  const bestRank = (f: FusedHit<T>): number => Math.min(...Object.values(f.ranks));
  return out.sort(
    (a, b) => b.score - a.score || bestRank(a) - bestRank(b) || (key(a.item) < key(b.item) ? -1 : key(a.item) > key(b.item) ? 1 : 0),
  );
}
