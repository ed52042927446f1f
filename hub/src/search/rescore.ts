// Second stage of hybrid search (issue 32): the candidate sources only decide WHO is considered; every
// candidate is then scored on every feature, with one fixed function. The retrieve-then-rescore design:
//  - features: the cosine similarity of the drawer's vector to the query's, and its BM25 score for the
//    query (over every keyword field, with the index's own collection statistics). A candidate a list
//    did not return still has both: its vector comes back with the keyword hit, its BM25 is asked of the
//    index for the candidates' ids. "Missing from a list" no longer counts as 0, and a third source
//    cannot dilute the others (no share-of-lists factor, as CombMNZ had);
//  - each feature is standardised over the pool (z = (x − mean) / σ), so neither a flat cosine list
//    nor an unbounded BM25 scale dominates, and the two are averaged: a log-linear model with equal
//    weights, no fitted constant;
//  - the score is exp(mean z − the pool's best mean z), in (0, 1]: the best candidate scores 1, and the
//    ranking rules after it (test-file prior, path, boilerplate, definition: x0.5 or x2 each) act as
//    additive log-priors on the same scale, as a fixed shift of ln 2 in z.

import type { FusedHit } from '../core/fusion.js';

export interface PoolCandidate<T> {
  item: T;
  /** Cosine similarity to the query (0 when the drawer has no vector of the query's model). */
  cos: number;
  /** BM25 for the query (0 when it holds none of the query's words). */
  bm25: number;
  /** 1-based rank in each source that found it. */
  ranks: Record<string, number>;
}

function meanSd(xs: readonly number[]): { mean: number; sd: number } {
  const n = xs.length;
  if (n === 0) return { mean: 0, sd: 1 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / n;
  const sd = Math.sqrt(variance);
  return { mean, sd: sd > 1e-12 ? sd : 1 };
}

/**
 * The pool, scored and sorted (best first; ties by best source rank, then `key`). `components`: the
 * cosine (`vector`) and the BM25 (`text`) as shares of the pool's best, in [0, 1], for reading; null
 * when that list did not return the hit (its feature was still scored).
 * A drawer rated not useful scores x0.5, one rated useful x1.1, as in fusion.
 */
export function rescorePool<T>(
  pool: readonly PoolCandidate<T>[],
  key: (item: T) => string,
  rating: (item: T) => boolean | null,
): FusedHit<T>[] {
  if (pool.length === 0) return [];
  const c = meanSd(pool.map((p) => p.cos));
  const b = meanSd(pool.map((p) => p.bm25));
  const bestBm = Math.max(0, ...pool.map((p) => p.bm25));
  const bestCos = Math.max(0, ...pool.map((p) => p.cos));
  const z = pool.map((p) => ((p.cos - c.mean) / c.sd + (p.bm25 - b.mean) / b.sd) / 2);
  const top = Math.max(...z);
  const out: FusedHit<T>[] = pool.map((p, i) => {
    let score = Math.exp((z[i] ?? top) - top);
    const r = rating(p.item);
    if (r === false) score *= 0.5;
    else if (r === true) score *= 1.1;
    return {
      item: p.item,
      score,
      // For reading: each feature as a share of the pool's best, under the list that found the hit (null: not found by it).
      components: {
        vector: p.ranks.vector === undefined ? null : bestCos > 0 ? Math.max(0, p.cos) / bestCos : 0,
        text: p.ranks.text === undefined ? null : bestBm > 0 ? p.bm25 / bestBm : 0,
      },
      ranks: p.ranks,
    };
  });
  const bestRank = (f: FusedHit<T>): number => Math.min(...Object.values(f.ranks));
  return out.sort(
    (x, y) =>
      y.score - x.score ||
      bestRank(x) - bestRank(y) ||
      (key(x.item) < key(y.item) ? -1 : key(x.item) > key(y.item) ? 1 : 0),
  );
}
