// Reservation globs: matching a concrete path, and the (conservative) overlap of two patterns.

import { describe, expect, it } from 'vitest';

import { globsOverlap, normalizeGlob, pathMatches } from '../../hub/src/core/globs.js';

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
