// The test-file prior's rule (hub/src/core/test-paths.ts): which paths are test files by the common
// conventions, which queries name tests, and that demoting keeps one score that never increases.

import { describe, expect, it } from 'vitest';

import { asksForTests, demoteTestFiles, isTestPath } from '../../hub/src/core/test-paths.js';
import type { FusedHit } from '../../hub/src/core/fusion.js';

describe('test-file prior', () => {
  it('knows test paths by folder and file-name conventions, and not words that merely contain "test"', () => {
    for (const p of [
      'test/unit/rrf.test.ts',
      'tests/test_api.py',
      'src/__tests__/app.tsx',
      'spec/models/user_spec.rb',
      'lib/app.spec.js',
      'pkg/server/server_test.go',
      'app/test_views.py',
      'src/test/java/org/acme/PoolTest.java',
      'internal/testdata/input.json',
      'src\\__mocks__\\fs.ts',
    ])
      expect(isTestPath(p), p).toBe(true);
    for (const p of ['hub/src/core/test-paths.ts', 'src/latest.ts', 'src/attestation.ts', 'docs/spec.md', 'src/Contest.java', 'lib/protest/index.js'])
      expect(isTestPath(p), p).toBe(false);
  });

  it('lets a query that names tests rank test files on their merits', () => {
    expect(asksForTests('which test covers the rate limiter?')).toBe(true);
    expect(asksForTests('How do the fault tests find a disk?')).toBe(true);
    expect(asksForTests('how is the rate limited?')).toBe(false);
    expect(asksForTests('the latest attestation')).toBe(false);
  });

  it('halves test hits, re-sorts, and leaves other drawers and test-seeking queries alone', () => {
    const hit = (path: string | undefined, score: number): FusedHit<{ path: string | undefined }> => ({ item: { path }, score, components: {}, ranks: {} });
    const hits = [hit('test/a.test.ts', 0.9), hit('src/a.ts', 0.6), hit(undefined, 0.5), hit('src/b.ts', 0.3)];
    const out = demoteTestFiles(hits, 'how does a work', (i) => i.path);
    expect(out.map((h) => [h.item.path, h.score])).toEqual([
      ['src/a.ts', 0.6],
      [undefined, 0.5],
      ['test/a.test.ts', 0.45],
      ['src/b.ts', 0.3],
    ]);
    expect(demoteTestFiles(hits, 'which test covers a', (i) => i.path)).toBe(hits);
  });
});
