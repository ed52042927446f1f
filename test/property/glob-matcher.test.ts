// The single-automaton glob matcher (groups compiled into one automaton, a lazy DFA on top, bit sets
// past the DFA caps) answers exactly as the matcher it replaced (one automaton per expanded brace
// alternative, kept as the oracle in test/helpers/glob-oracle-v1.ts): on random patterns and paths,
// on paths built to match, on the hostile shapes at the caps against 4 KB paths, and with the DFA
// capped to nothing or to two states so the bit-set road is checked as well.

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';

import { dfaLimits, dfaCellsInUse } from '../../hub/src/core/glob-automaton.js';
import { clearGlobCache, globProblem, matchWork, pathMatches } from '../../hub/src/core/globs.js';
import { pathMatches as oldPathMatches } from '../helpers/glob-oracle-v1.js';

const DEFAULT_LIMITS = { ...dfaLimits };
afterEach(() => Object.assign(dfaLimits, DEFAULT_LIMITS));

/** New DFA caps, on a fresh compile cache (DFA states interned earlier would still be used). */
function limitDfa(limits: { perPattern: number; total: number }): void {
  clearGlobCache();
  Object.assign(dfaLimits, limits);
}

const PATTERN_ATOMS = [
  'a', 'b', 'ab', '/', '.', '-', 'é', '😀', '+', '(',
  '*', '**', '**/', '?', '*a', '?a',
  '{', '}', ',', '{a,b}', '{a,aa}', '{,a}', '{a,*/b}', '{*,?}', '{a,{b,**/}}', '{**/,}', '{/,a/}',
];
const PATH_ATOMS = ['a', 'b', '/', '.', 'aa', 'ab', 'é', '😀', '-', '+'];

const pattern = fc.array(fc.constantFrom(...PATTERN_ATOMS), { minLength: 1, maxLength: 14 }).map((xs) => xs.join(''));
const path = fc.array(fc.constantFrom(...PATH_ATOMS), { minLength: 1, maxLength: 24 }).map((xs) => xs.join(''));
/** None half the time, else 20 to 70 characters: the states after it straddle the mask words' edges. */
const padding = fc.oneof(fc.constant(''), fc.integer({ min: 20, max: 70 }).map((n) => 'p'.repeat(n)));

/** A path the pattern should often match: wildcards filled with random runs, a random alternative taken. */
function instantiate(pat: string, pick: (n: number) => number): string {
  let out = '';
  let i = 0;
  const fill = (alphabet: string[], max: number): string => {
    let s = '';
    for (let k = pick(max + 1); k > 0; k--) s += alphabet[pick(alphabet.length)] ?? '';
    return s;
  };
  // Braces: take alternatives by skipping to a random ',' at depth 0 of the group (approximate on purpose:
  // the oracle decides what is a match, this only makes matches common).
  while (i < pat.length) {
    if (pat.startsWith('**/', i)) {
      out += fill(['a', 'b', '/'], 6) + (pick(2) ? '/' : '');
      i += 3;
    } else if (pat.startsWith('**', i)) {
      out += fill(['a', 'b', '/'], 6);
      i += 2;
    } else if (pat[i] === '*') {
      out += fill(['a', 'b'], 4);
      i++;
    } else if (pat[i] === '?') {
      out += pick(2) ? 'a' : 'b';
      i++;
    } else if (pat[i] === '{' || pat[i] === '}' || pat[i] === ',') {
      i++;
      if (pat[i - 1] === ',' && pick(2)) while (i < pat.length && pat[i] !== '}' && pat[i] !== ',') i++;
    } else {
      out += pat[i];
      i++;
    }
  }
  return out;
}

function agree(p: string, g: string): boolean {
  const now = pathMatches(p, g);
  const before = oldPathMatches(p, g);
  const show = (x: string): string => JSON.stringify(x.length > 80 ? `${x.slice(0, 40)}…(${x.length})…${x.slice(-20)}` : x);
  if (now !== before) throw new Error(`disagree on path ${show(p)} pattern ${show(g)}: new ${now}, old ${before}`);
  return now;
}

describe('single-automaton glob matcher against the old one (issue 29 follow-up)', () => {
  for (const [road, limits] of [
    ['lazy DFA', DEFAULT_LIMITS],
    ['DFA capped at 2 states (bit sets after)', { perPattern: 2, total: 8192 }],
    ['no DFA (bit sets only)', { perPattern: 0, total: 0 }],
  ] as const) {
    it(`agrees on random patterns and paths, and on paths built to match (${road})`, () => {
      limitDfa(limits);
      let matched = 0;
      let runs = 0;
      fc.assert(
        fc.property(pattern, path, fc.array(fc.nat(), { minLength: 64, maxLength: 64 }), padding, (g0, p0, seeds, pad) => {
          let at = 0;
          const pick = (n: number): number => (n <= 1 ? 0 : (seeds[at++ % seeds.length] ?? 0) % n);
          // A literal run before both puts the pattern's states across 32-bit mask words.
          const g = pad + g0;
          runs += 2;
          if (agree(pad + p0, g)) matched++;
          if (agree(instantiate(g, pick), g)) matched++;
        }),
        { numRuns: 3000, seed: 2911 },
      );
      // Not a vacuous comparison: a fair share of the pairs match.
      expect(matched / runs).toBeGreaterThan(0.15);
    });
  }

  it('agrees on the hostile shapes at the caps against 4 KB paths, with bounded work', () => {
    const shapes = [
      `${'*a'.repeat(14)}*b`,
      `${'*a'.repeat(31)}*b`,
      `${'?'.repeat(31)}*`,
      `*a${'?'.repeat(30)}`,
      `${'**/'.repeat(16)}*b`,
      `${'{a,aa}'.repeat(4)}${'*a'.repeat(11)}*b`,
      `${'{a,aa}'.repeat(4)}${'*a'.repeat(11)}*`,
      `{${'*a,'.repeat(15)}*b}${'*a'.repeat(8)}`,
      `${'{'.repeat(100)}a${'}'.repeat(100)}*`,
      `${'**/a'.repeat(8)}/**/c`,
      `${'**/a'.repeat(30)}`,
      `${'*{a,b}'.repeat(4)}${'?'.repeat(24)}`,
    ];
    let seed = 4096;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 16) % n;
    };
    const random = (alphabet: string): string => Array.from({ length: 4096 }, () => alphabet[rnd(alphabet.length)]).join('');
    const paths = [
      'a'.repeat(4096),
      `${'a'.repeat(4095)}b`,
      'a/'.repeat(2048),
      `${'a/'.repeat(2047)}ab`,
      random('ab'),
      random('aab/'),
    ];
    for (const limits of [DEFAULT_LIMITS, { perPattern: 0, total: 0 }]) {
      limitDfa(limits);
      for (const g of shapes) {
        expect(globProblem(g), g).toBeNull();
        for (const p of paths) {
          agree(p, g);
          // Linear: per character, the state masks once plus one closure mask per live source.
          const words = Math.floor((g.length * 2 + 2) / 32) + 1;
          expect(matchWork.last, `${g} vs ${p.slice(0, 12)}…`).toBeLessThanOrEqual((p.length + 1) * words * 40);
        }
      }
    }
    // What the DFA buys: the worst pattern of the bench costs about one table lookup per character.
    limitDfa(DEFAULT_LIMITS);
    const worst = `${'{a,aa}'.repeat(4)}${'*a'.repeat(11)}*b`;
    pathMatches('a'.repeat(4096), worst);
    expect(matchWork.last).toBeLessThanOrEqual(4096 + 2000);
  });

  it('keeps the DFA budget bounded: patterns dropped from the compile cache give their states back', () => {
    const batch = (prefix: string): number => {
      for (let k = 0; k < 1100; k++) pathMatches(`${prefix}${String(k).padStart(4, '0')}/abab`, `${prefix}${String(k).padStart(4, '0')}/*{a,b}*`);
      return dfaCellsInUse();
    };
    // Each batch outlives the 1,024-pattern cache: the second one's states replace the first one's.
    const first = batch('x');
    const second = batch('y');
    expect(first).toBeGreaterThan(0);
    expect(second).toBeLessThanOrEqual(first * 1.1);
    expect(second).toBeLessThanOrEqual(dfaLimits.total);
    // A pattern whose DFA would have thousands of states stops at the per-pattern cap and still agrees.
    let seed = 7;
    const path = Array.from({ length: 4096 }, () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 16) % 2 ? 'a' : 'b';
    }).join('');
    clearGlobCache();
    expect(dfaCellsInUse()).toBe(0);
    agree(path, `*a${'?'.repeat(30)}`);
    // Exactly the cap: 256 states of 2 mask words and 3 classes (other, '/', 'a').
    expect(dfaCellsInUse()).toBe(dfaLimits.perPattern * (4 * 2 + 3 + 80));
    // At the total cap nothing more is interned, and answers stay the same.
    Object.assign(dfaLimits, { total: 0 });
    expect(agree('zz/ab', 'zz/*{a,b}')).toBe(true);
    Object.assign(dfaLimits, { total: dfaCellsInUse() });
    expect(agree('zz/ab', 'zz/*{a,b}')).toBe(true);
    expect(agree('zz/abc', 'zz/*{a,b}')).toBe(false);
    expect(dfaCellsInUse()).toBe(dfaLimits.total);
  });

  it('reads a private-use character in a pattern as itself (the old matcher took U+E000 for `*`)', () => {
    expect(pathMatches('a\uE000b', 'a\uE000b*')).toBe(true);
    expect(pathMatches('axyzb', 'a\uE000b*')).toBe(false);
    expect(oldPathMatches('axyzb', 'a\uE000b*')).toBe(true);
  });
});
