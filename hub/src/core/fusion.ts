// Fusion of scored candidate lists (vector similarity, full-text BM25) into one ranking with one
// readable score per hit and its per-list components. Several methods are kept so the retrieval
// bench can compare them (docs/retrieval.md, figures of each); `DEFAULT_FUSION` is the one search uses.

import { RRF_K } from './rrf.js';

/** A candidate list: best first, `score` higher = better (cosine similarity, BM25, ...). */
export type ScoredList<T> = ReadonlyArray<{ item: T; score: number }>;

export type FusionMethod = 'rrf' | 'minmax' | 'zscore' | 'maxnorm' | 'adaptive' | 'headroom' | 'headroom-mnz';

export const FUSION_METHODS: readonly FusionMethod[] = ['rrf', 'minmax', 'zscore', 'maxnorm', 'adaptive', 'headroom', 'headroom-mnz'];

export const DEFAULT_FUSION: FusionMethod = 'headroom-mnz';

export interface FusedHit<T> {
  item: T;
  /** The fused score, in [0, 1] before the rating adjustment; the list is sorted by it. */
  score: number;
  /** Each list's normalised contribution (null: the item was not in that list). */
  components: Record<string, number | null>;
  /** Rank (1-based) in each list where the item appeared. */
  ranks: Record<string, number>;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function std(xs: readonly number[], m: number): number {
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) * (b - m), 0) / xs.length);
}

/** Φ(z), the standard normal CDF (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Lists whose score has a fixed ceiling (cosine similarity: 1); others are scaled by their best. */
const CEILINGS: Readonly<Record<string, number>> = { vector: 1 };

/**
 * Each list's scores mapped into [0, 1] by the method's normalisation (same order as the list).
 * `exhaustive`: the list holds every match (shorter than the pool asked for), so the drawers missing
 * from it scored 0 and its floor is 0 rather than its last score.
 */
function normalised(method: FusionMethod, scores: readonly number[], name: string, exhaustive: boolean): number[] {
  if (scores.length === 0) return [];
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  switch (method) {
    case 'headroom':
    case 'headroom-mnz': {
      const ceiling = CEILINGS[name];
      if (ceiling !== undefined) {
        // How far above the pool's average similarity, as a share of the headroom to a perfect match.
        const m = mean(scores);
        return scores.map((s) => (ceiling > m ? clamp01((s - m) / (ceiling - m)) : 1));
      }
      const floor = exhaustive ? Math.min(0, min) : min;
      return scores.map((s) => (max === floor ? 1 : (s - floor) / (max - floor)));
    }
    case 'rrf':
      return scores.map((_, i) => (RRF_K + 1) / (RRF_K + i + 1));
    case 'maxnorm':
      return scores.map((s) => (max > 0 ? clamp01(s / max) : 1));
    case 'zscore': {
      // The standard score within the list, mapped into [0, 1] by the normal CDF (order kept, no clipping).
      const m = mean(scores);
      const sd = std(scores, m);
      if (sd === 0) return scores.map(() => 1);
      return scores.map((s) => normalCdf((s - m) / sd));
    }
    case 'minmax':
    case 'adaptive':
      return scores.map((s) => (max === min ? 1 : (s - min) / (max - min)));
  }
}

/**
 * How much a list is trusted for this query (adaptive): the separation of its top score from the
 * rest of its list, in the list's own standard deviations (a confident ranker puts its best hit
 * clearly ahead). Parameter-free; an empty or flat list gets 0.
 */
function confidence(scores: readonly number[]): number {
  if (scores.length < 2) return scores.length === 1 ? 1 : 0;
  const rest = scores.slice(1);
  const m = mean(rest);
  const sd = std(scores, mean(scores));
  if (sd === 0) return 0;
  return Math.max(0, ((scores[0] ?? 0) - m) / sd);
}

/**
 * Fuses scored lists: every item gets each list's normalised score (0 where absent), the fused
 * score is their mean (adaptive: their confidence-weighted mean). `headroom`: a cosine counts by how
 * far it stands above the candidates' average similarity, as a share of the way to a perfect match,
 * so a flat (uninformative) vector list weighs little; BM25 is scaled between the list's floor and
 * its best. `headroom-mnz` (the default) also multiplies by the share of the lists that found the
 * drawer (CombMNZ), so agreement between the two lists counts. A drawer rated not useful ranks lower
 * (score halved), one rated useful a little higher (x1.1). Equal scores keep the best list rank.
 */
export function fuseScored<T>(
  lists: Record<string, ScoredList<T>>,
  key: (item: T) => string,
  rating: (item: T) => boolean | null,
  method: FusionMethod = DEFAULT_FUSION,
  /** How many candidates were asked of each list (a shorter list is exhaustive). */
  pool = Infinity,
): FusedHit<T>[] {
  const names = Object.keys(lists).filter((n) => (lists[n]?.length ?? 0) > 0);
  const weights = new Map<string, number>();
  for (const name of names) weights.set(name, method === 'adaptive' ? confidence((lists[name] ?? []).map((h) => h.score)) : 1);
  let total = [...weights.values()].reduce((a, b) => a + b, 0);
  if (total === 0) {
    for (const name of names) weights.set(name, 1);
    total = names.length;
  }
  const byKey = new Map<string, FusedHit<T>>();
  for (const name of names) {
    const list = lists[name] ?? [];
    const norm = normalised(method, list.map((h) => h.score), name, list.length < pool);
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
  if (method === 'headroom-mnz' && names.length > 1) for (const entry of out) entry.score *= Object.keys(entry.ranks).length / names.length;
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
