// A counterexample fast-check found in CI: the adaptive weighted mean summed to 1.0000000000000002.
import { describe, expect, it } from 'vitest';

import { fuseScored } from '../../bench/fusion-variants.js';

type Item = { id: string; useful: boolean | null };
const hits = (pairs: Array<[string, number]>) => pairs.map(([id, score]) => ({ item: { id, useful: null } as Item, score }));

describe('fusion scores stay in [0, 1]', () => {
  it('a weighted mean that rounds above 1 is clamped (adaptive, seed 675298664)', () => {
    const vector = hits([['k', 0.9593333333333334], ['b', 0.8996666666666666], ['h', 0.8936666666666667], ['m', 0.505], ['j', 0.29533333333333334], ['i', 0.234], ['p', 0.0013333333333333333]]);
    const text = hits([['k', 0.7533333333333333], ['o', 0.695], ['p', 0.0036666666666666666]]);
    for (const method of ['adaptive', 'minmax', 'headroom', 'headroom-mnz'] as const)
      for (const f of fuseScored({ vector, text }, (i: Item) => i.id, (i: Item) => i.useful, method)) expect(f.score).toBeLessThanOrEqual(1);
  });
});
