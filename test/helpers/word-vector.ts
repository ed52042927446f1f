// A deterministic bag-of-words embedding for tests that need real vectors without a model: each word
// adds its SHA-256 bytes (centred on 0) to the vector, then it is normalised. Texts sharing words are near.

import { createHash } from 'node:crypto';

import { normalize } from '../../hub/src/embed/embedder.js';

/** The unit vector of `text` in `dimensions` dimensions. */
export function wordVector(text: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const h = createHash('sha256').update(w).digest();
    for (let d = 0; d < dimensions; d++) v[d] = (v[d] ?? 0) + ((h[d % 32] ?? 0) - 127.5) / 127.5;
  }
  return normalize(v);
}
