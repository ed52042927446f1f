// Pooling of a transformer's token outputs into one vector per text (mean, CLS, max, last token).
// Pure arithmetic on flat typed arrays; normalisation is the caller's (see embedder.ts).

export type Pooling = 'mean' | 'cls' | 'max' | 'lasttoken';

export const POOLINGS: readonly Pooling[] = ['mean', 'cls', 'max', 'lasttoken'];

/**
 * Pools `hidden` ([batch, seq, dim], row-major) under `mask` ([batch, seq], 1 = real token, 0 = padding).
 * Padding never contributes: mean divides by the real-token count, max skips padded positions, last token
 * is the last real one (right padding).
 */
export function poolTokens(
  hidden: Float32Array,
  mask: ArrayLike<number>,
  shape: { batch: number; seq: number; dim: number },
  pooling: Pooling,
): Float32Array[] {
  const { batch, seq, dim } = shape;
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const rowBase = b * seq * dim;
    const vector = new Float32Array(dim);
    if (pooling === 'cls') {
      vector.set(hidden.subarray(rowBase, rowBase + dim));
    } else if (pooling === 'lasttoken') {
      let last = 0;
      for (let t = 0; t < seq; t++) if ((mask[b * seq + t] ?? 0) > 0) last = t;
      vector.set(hidden.subarray(rowBase + last * dim, rowBase + (last + 1) * dim));
    } else if (pooling === 'max') {
      vector.fill(-Infinity);
      let any = false;
      for (let t = 0; t < seq; t++) {
        if ((mask[b * seq + t] ?? 0) <= 0) continue;
        any = true;
        const base = rowBase + t * dim;
        for (let d = 0; d < dim; d++) {
          const x = hidden[base + d] ?? 0;
          if (x > (vector[d] ?? 0)) vector[d] = x;
        }
      }
      if (!any) vector.fill(0);
    } else {
      const sum = new Float64Array(dim);
      let count = 0;
      for (let t = 0; t < seq; t++) {
        if ((mask[b * seq + t] ?? 0) <= 0) continue;
        count += 1;
        const base = rowBase + t * dim;
        for (let d = 0; d < dim; d++) sum[d] = (sum[d] ?? 0) + (hidden[base + d] ?? 0);
      }
      const divisor = Math.max(count, 1e-9);
      for (let d = 0; d < dim; d++) vector[d] = (sum[d] ?? 0) / divisor;
    }
    out.push(vector);
  }
  return out;
}
