// The test-file prior of search: a hit from a project's test file ranks like one rated not useful
// (score x0.5) unless the query asks for tests. Tests use every word of the code they test, so they
// match a question about that code as well as the code does; code search engines (Zoekt, GitHub)
// rank them below it the same way. Test paths are recognised by the common naming conventions.

import type { FusedHit } from './fusion.js';

/** Folders that hold tests by convention (JS, Python, Go testdata, Ruby/JS specs, Jest mocks). */
const TEST_DIR = /(^|\/)(tests?|__tests__|specs?|testdata|__mocks__)\//i;
/** Test file names: `x.test.ts`, `x.spec.js`, `x_test.go`, `x_spec.rb`, `test_x.py`, `XTest.java`. */
const TEST_FILE = /[._](tests?|specs?)\.[^./]+$|(^|\/)test_[^/]*\.py$|(^|\/)[A-Z][\w]*Tests?\.(java|kt|cs|scala)$/;
/** A query that names tests (then test files rank on their merits). */
const ASKS_FOR_TESTS = /\b(tests?|testing|tested|specs?|fixtures?|mocks?)\b/i;

/** The score factor of a demoted hit: the same as a drawer rated not useful (core/fusion.ts). */
export const TEST_FILE_FACTOR = 0.5;

/** Whether a path (relative to a mined project's root, `/`-separated) is a test file by convention. */
export function isTestPath(relPath: string): boolean {
  const path = relPath.replace(/\\/g, '/');
  return TEST_DIR.test(path) || TEST_FILE.test(path);
}

/** Whether the query asks about tests (test, tests, testing, spec, fixture, mock, ...). */
export function asksForTests(query: string): boolean {
  return ASKS_FOR_TESTS.test(query);
}

/**
 * The fused hits with test-file hits' scores x0.5 and re-sorted (stable: equal scores keep their
 * order), unless the query asks for tests. `relPath`: a hit's path in its mined project, undefined for
 * drawers that are not project files (never demoted).
 */
export function demoteTestFiles<T>(hits: FusedHit<T>[], query: string, relPath: (item: T) => string | undefined, factor = TEST_FILE_FACTOR): FusedHit<T>[] {
  if (asksForTests(query)) return hits;
  let changed = false;
  const out = hits.map((h) => {
    const path = relPath(h.item);
    if (path === undefined || !isTestPath(path)) return h;
    changed = true;
    return { ...h, score: h.score * factor };
  });
  return changed ? out.map((h, i) => ({ h, i })).sort((a, b) => b.h.score - a.h.score || a.i - b.i).map(({ h }) => h) : out;
}
