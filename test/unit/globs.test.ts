// Reservation globs: matching a concrete path, and the (conservative) overlap of two patterns.

import { describe, expect, it } from 'vitest';

import {
  MAX_GLOB_CHARS,
  MAX_GLOB_WILDCARDS,
  expandBraces,
  globProblem,
  globsOverlap,
  matchWork,
  normalizeGlob,
  pathMatches,
} from '../../hub/src/core/globs.js';

describe('reservation globs', () => {
  it('normalizes ./, leading slashes, doubled slashes and a trailing slash (a directory)', () => {
    expect(normalizeGlob('./src//a.ts')).toBe('src/a.ts');
    expect(normalizeGlob('/src/')).toBe('src/**');
    expect(normalizeGlob('src\\win\\a.ts')).toBe('src/win/a.ts');
  });

  it('matches * and ? within a segment, ** across segments, {a,b}, and a plain directory prefix', () => {
    expect(pathMatches('src/a.ts', 'src/*.ts')).toBe(true);
    expect(pathMatches('src/deep/a.ts', 'src/*.ts')).toBe(false);
    expect(pathMatches('src/deep/a.ts', 'src/**/*.ts')).toBe(true);
    expect(pathMatches('src/a.ts', 'src/**/*.ts')).toBe(true);
    expect(pathMatches('src/a.js', 'src/*.{ts,js}')).toBe(true);
    expect(pathMatches('src/ab.ts', 'src/?.ts')).toBe(false);
    expect(pathMatches('src/auth/login.ts', 'src/auth')).toBe(true);
    expect(pathMatches('src/authx/login.ts', 'src/auth')).toBe(false);
    expect(pathMatches('a+b(1).md', 'a+b(1).md')).toBe(true);
  });

  it('reports overlap exactly when one side is literal, conservatively for two globs', () => {
    expect(globsOverlap('src/auth/**', 'src/auth/login.ts')).toBe(true);
    expect(globsOverlap('src/auth/**', 'docs/x.md')).toBe(false);
    expect(globsOverlap('src/**', 'src/auth/*.ts')).toBe(true);
    expect(globsOverlap('src/*.ts', 'lib/*.ts')).toBe(false);
    expect(globsOverlap('src', 'src/a/b.ts')).toBe(true);
  });
});

// The regex the matcher replaced, kept here as an oracle on small inputs (it backtracks on large ones).
function oracle(path: string, pattern: string): boolean {
  const p = normalizeGlob(path);
  const g = normalizeGlob(pattern);
  if (!/[*?{[]/.test(g)) return p === g || p.startsWith(`${g}/`);
  let re = '';
  let braces = 0;
  for (let i = 0; i < g.length; i++) {
    const c = g[i] ?? '';
    if (c === '*') {
      if (g[i + 1] === '*') {
        const slash = g[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) re += '|';
    else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}${')'.repeat(braces)}$`).test(p);
}

describe('linear-time glob matching (issue 29)', () => {
  it('agrees with the old regex semantics on 20,000 random small patterns and paths', () => {
    let seed = 29;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const patternAtoms = ['a', 'b', '/', '*', '**', '**/', '?', '{a,b}', '{a,*/b}', '.', '{,a}'];
    const pathAtoms = ['a', 'b', '/', '.'];
    for (let n = 0; n < 20_000; n++) {
      let pattern = '';
      for (let k = 1 + rnd(6); k > 0; k--) pattern += patternAtoms[rnd(patternAtoms.length)];
      let path = '';
      for (let k = 1 + rnd(8); k > 0; k--) path += pathAtoms[rnd(pathAtoms.length)];
      if (globProblem(normalizeGlob(pattern)) !== null) continue;
      if (pathMatches(path, pattern) !== oracle(path, pattern))
        throw new Error(`disagree on path '${path}' pattern '${pattern}': ${pathMatches(path, pattern)}`);
    }
  });

  it('bounds the work of the ReDoS pattern against a 4 KB path by path length × pattern states', () => {
    const pattern = `${'*a'.repeat(16)}*b`;
    expect(globProblem(pattern)).toBeNull();
    const path = 'a'.repeat(4096);
    expect(pathMatches(path, pattern)).toBe(false);
    // Per path character: one pass over the state masks plus a closure of at most a few passes.
    const words = (s: number): number => Math.floor(s / 32) + 1;
    expect(matchWork.last).toBeLessThanOrEqual(4 * (path.length + 1) * words(pattern.length + 1));
    const deep = `${'a/'.repeat(2047)}b`;
    expect(pathMatches(deep, `${'**/a'.repeat(8)}/**/c`)).toBe(false);
    expect(matchWork.last).toBeLessThanOrEqual(4 * (deep.length + 1) * 2);
  });

  it('shares the work of brace alternatives: the bench worst (16 alternatives) costs about one step per path character', () => {
    // The old matcher ran the path once per expanded alternative (16 × 4,096 characters × mask passes).
    const pattern = `${'{a,aa}'.repeat(4)}${'*a'.repeat(11)}*b`;
    expect(globProblem(pattern)).toBeNull();
    for (const path of ['a'.repeat(4096), `${'a'.repeat(4095)}b`]) {
      expect(pathMatches(path, pattern)).toBe(path.endsWith('b'));
      expect(matchWork.last).toBeLessThanOrEqual(2 * path.length);
    }
  });

  it('caps pattern length, wildcard count and brace alternatives', () => {
    expect(globProblem('a'.repeat(MAX_GLOB_CHARS + 1))).toMatch(/maximum is 256/);
    expect(globProblem('*a'.repeat(MAX_GLOB_WILDCARDS + 1))).toMatch(/wildcards/);
    expect(globProblem('{a,b}'.repeat(7))).toMatch(/alternatives/);
    expect(expandBraces('{a,b}{c,{d,e}}')).toEqual(['ac', 'ad', 'ae', 'bc', 'bd', 'be']);
    // A pattern past the caps (only sync can bring one) matches conservatively by its literal prefix.
    expect(pathMatches('src/x', `src/${'{a,b}'.repeat(10)}`)).toBe(true);
    expect(pathMatches('lib/x', `src/${'{a,b}'.repeat(10)}`)).toBe(false);
  });
});
