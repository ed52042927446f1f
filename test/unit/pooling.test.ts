// Pooling arithmetic: each mode over a padded batch, where padding must never contribute.

import { describe, expect, it } from 'vitest';

import { poolTokens } from '../../hub/src/embed/pooling.js';

// batch 2, seq 3, dim 2; row 0 has 3 real tokens, row 1 has 2 real tokens and one pad (with loud values).
const hidden = Float32Array.from([1, 2, 3, 4, 5, -6, /* row 1 */ 10, 0, 20, 2, 999, 999]);
const mask = [1, 1, 1, 1, 1, 0];
const shape = { batch: 2, seq: 3, dim: 2 };

describe('poolTokens', () => {
  it('mean divides by the real-token count', () => {
    const [a, b] = poolTokens(hidden, mask, shape, 'mean');
    expect(Array.from(a ?? [])).toEqual([3, 0]);
    expect(Array.from(b ?? [])).toEqual([15, 1]);
  });

  it('cls takes the first token', () => {
    expect(poolTokens(hidden, mask, shape, 'cls').map((v) => Array.from(v))).toEqual([
      [1, 2],
      [10, 0],
    ]);
  });

  it('max skips padding', () => {
    expect(poolTokens(hidden, mask, shape, 'max').map((v) => Array.from(v))).toEqual([
      [5, 4],
      [20, 2],
    ]);
  });

  it('lasttoken takes the last real token', () => {
    expect(poolTokens(hidden, mask, shape, 'lasttoken').map((v) => Array.from(v))).toEqual([
      [5, -6],
      [20, 2],
    ]);
  });

  it('gives every vector its own buffer (they are transferred between threads)', () => {
    const [a, b] = poolTokens(hidden, mask, shape, 'cls');
    expect(a?.buffer).not.toBe(b?.buffer);
    expect(a?.buffer).not.toBe(hidden.buffer);
  });
});
