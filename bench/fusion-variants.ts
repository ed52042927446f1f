// The fusion methods the retrieval bench compares (docs/retrieval.md, the options table). Only
// `headroom-mnz` is used by search (hub/src/core/fusion.ts, HEADROOM_MNZ); the others were tried and
// are kept here, outside the hub, so the bench can keep scoring them on the same candidates.

import { fuseScored as fuseWith, headroom, HEADROOM_MNZ, type FusedHit, type FusionScheme, type ScoredList } from '../hub/src/core/fusion.js';
import { RRF_K } from '../hub/src/core/rrf.js';

export type { FusedHit, ScoredList };

export type FusionMethod = 'rrf' | 'minmax' | 'zscore' | 'maxnorm' | 'adaptive' | 'headroom' | 'headroom-mnz';

export const FUSION_METHODS: readonly FusionMethod[] = ['rrf', 'minmax', 'zscore', 'maxnorm', 'adaptive', 'headroom', 'headroom-mnz'];

/** The method search uses. */
export const DEFAULT_FUSION: FusionMethod = 'headroom-mnz';

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

const minmax = (scores: readonly number[]): number[] => {
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  return scores.map((s) => (max === min ? 1 : (s - min) / (max - min)));
};

/**
 * How much a list is trusted for this query (adaptive): the separation of its top score from the
 * rest of its list, in the list's own standard deviations. Parameter-free; an empty or flat list gets 0.
 */
function confidence(scores: readonly number[]): number {
  if (scores.length < 2) return scores.length === 1 ? 1 : 0;
  const rest = scores.slice(1);
  const m = mean(rest);
  const sd = std(scores, mean(scores));
  if (sd === 0) return 0;
  return Math.max(0, ((scores[0] ?? 0) - m) / sd);
}

export const FUSION_SCHEMES: Readonly<Record<FusionMethod, FusionScheme>> = {
  rrf: { normalise: (scores) => scores.map((_, i) => (RRF_K + 1) / (RRF_K + i + 1)), combMnz: false },
  minmax: { normalise: minmax, combMnz: false },
  zscore: {
    // The standard score within the list, mapped into [0, 1] by the normal CDF (order kept, no clipping).
    normalise: (scores) => {
      const m = mean(scores);
      const sd = std(scores, m);
      return sd === 0 ? scores.map(() => 1) : scores.map((s) => normalCdf((s - m) / sd));
    },
    combMnz: false,
  },
  maxnorm: {
    normalise: (scores) => {
      const max = Math.max(...scores);
      return scores.map((s) => (max > 0 ? clamp01(s / max) : 1));
    },
    combMnz: false,
  },
  adaptive: { normalise: minmax, weight: confidence, combMnz: false },
  headroom: { normalise: headroom, combMnz: false },
  'headroom-mnz': HEADROOM_MNZ,
};

/** fuseScored of the hub with a named method. */
export function fuseScored<T>(
  lists: Record<string, ScoredList<T>>,
  key: (item: T) => string,
  rating: (item: T) => boolean | null,
  method: FusionMethod = DEFAULT_FUSION,
  pool = Infinity,
): FusedHit<T>[] {
  return fuseWith(lists, key, rating, FUSION_SCHEMES[method], pool);
}
