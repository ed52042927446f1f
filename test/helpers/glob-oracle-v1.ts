// The reservation-glob matcher as it was before the single-automaton rewrite (commit da3ec49..956ee49:
// hub/src/core/globs.ts), kept as the oracle of test/property/glob-matcher.test.ts: one bit-parallel
// automaton per expanded brace alternative. Its matching code is verbatim; the pieces the rewrite left
// unchanged (path normalization, hasGlob, the caps) come from globs.ts. Test-only; nothing in hub/ imports it.

import { hasGlob, MAX_GLOB_ALTERNATIVES, MAX_GLOB_CHARS, MAX_GLOB_WILDCARDS, normalizeGlob } from '../../hub/src/core/globs.js';

const GLOB_CHARS = /[*?{[]/;

/** Why a pattern is refused as a reservation (too long, too many wildcards or alternatives), or null. */
export function globProblem(pattern: string): string | null {
  if (pattern.length > MAX_GLOB_CHARS) return `is ${pattern.length} characters; the maximum is ${MAX_GLOB_CHARS}`;
  const wildcards = pattern.match(/\*\*|\*|\?/g)?.length ?? 0;
  if (wildcards > MAX_GLOB_WILDCARDS) return `holds ${wildcards} wildcards; the maximum is ${MAX_GLOB_WILDCARDS}`;
  const alternatives = expandBraces(pattern);
  if (alternatives === null) return `expands to more than ${MAX_GLOB_ALTERNATIVES} alternatives`;
  const total = alternatives.reduce((n, a) => n + a.length, 0);
  if (total > 2 * MAX_GLOB_CHARS) return `expands to ${total} characters of alternatives; the maximum is ${2 * MAX_GLOB_CHARS}`;
  return null;
}

// Wildcards are read within one run of the pattern (as the regex it replaced did: `**{,x}/` is `**`
// then a group, never `**/`), so each run's wildcards are encoded before the groups are expanded.
const W_STAR = '\uE000';
const W_ANY = '\uE001';
const W_DIRS = '\uE002';
const W_ONE = '\uE003';

function encodeWildcards(run: string): string {
  return run.replace(/\*\*\/|\*\*|\*|\?/g, (w) => (w === '**/' ? W_DIRS : w === '**' ? W_ANY : w === '*' ? W_STAR : W_ONE));
}

/**
 * The pattern with its `{a,b}` groups expanded (nested allowed, an unclosed group runs to the end),
 * wildcards encoded; null past the cap.
 */
export function expandBraces(pattern: string): string[] | null {
  // Parse into a sequence of literal runs and groups, then take the cross product, capped.
  type Node = string | Node[][];
  let i = 0;
  const parseSeq = (inGroup: boolean): Node[] => {
    const seq: Node[] = [];
    let lit = '';
    while (i < pattern.length) {
      const c = pattern[i] ?? '';
      if (c === '{') {
        if (lit) seq.push(encodeWildcards(lit));
        lit = '';
        i++;
        const alts: Node[][] = [parseSeq(true)];
        while (pattern[i] === ',') {
          i++;
          alts.push(parseSeq(true));
        }
        if (pattern[i] === '}') i++;
        seq.push(alts);
      } else if (inGroup && (c === ',' || c === '}')) break;
      else {
        lit += c;
        i++;
      }
    }
    if (lit) seq.push(encodeWildcards(lit));
    return seq;
  };
  const expandSeq = (seq: Node[]): string[] | null => {
    let out = [''];
    for (const node of seq) {
      if (typeof node === 'string') {
        out = out.map((s) => s + node);
        continue;
      }
      const options: string[] = [];
      for (const alt of node) {
        const sub = expandSeq(alt);
        if (!sub) return null;
        options.push(...sub);
        if (options.length > MAX_GLOB_ALTERNATIVES) return null;
      }
      if (out.length * options.length > MAX_GLOB_ALTERNATIVES) return null;
      out = out.flatMap((s) => options.map((o) => s + o));
    }
    return out;
  };
  const top: Node[] = [];
  while (i < pattern.length) {
    top.push(...parseSeq(false));
    if (i < pattern.length) {
      // a stray ',' or '}' outside any group is a literal
      top.push(pattern[i] ?? '');
      i++;
    }
  }
  return expandSeq(top);
}

// Automaton states: a literal char, `?` (one char but '/'), `*` (any run without '/'), `**` (any run),
// and `**/` (zero or more whole segments) which needs two states: at a segment start, inside one.
const LIT = 0;
const ONE = 1;
const STAR = 2;
const ANY = 3;
const DIRS = 4;
const DIRS_IN = 5;

/** An alternative compiled to bit masks over its states (state m, one past the last, accepts). */
interface Automaton {
  m: number;
  words: number;
  /** Per char code, the LIT states consuming it. */
  lit: Map<number, Uint32Array>;
  one: Uint32Array;
  star: Uint32Array;
  any: Uint32Array;
  dirs: Uint32Array;
  dirsIn: Uint32Array;
}

const setBit = (mask: Uint32Array, s: number): void => {
  mask[s >>> 5] = (mask[s >>> 5] ?? 0) | (1 << (s & 31));
};

/** Compiles one alternative (wildcards encoded by expandBraces). */
function compile(encoded: string): Automaton {
  const kinds: number[] = [];
  const codes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i] ?? '';
    if (c === W_DIRS) {
      kinds.push(DIRS, DIRS_IN);
      codes.push(0, 0);
    } else if (c === W_ANY || c === W_STAR || c === W_ONE) {
      kinds.push(c === W_ANY ? ANY : c === W_STAR ? STAR : ONE);
      codes.push(0);
    } else {
      kinds.push(LIT);
      codes.push(encoded.charCodeAt(i));
    }
  }
  const m = kinds.length;
  const words = (m >>> 5) + 1;
  const mask = (): Uint32Array => new Uint32Array(words);
  const a: Automaton = { m, words, lit: new Map(), one: mask(), star: mask(), any: mask(), dirs: mask(), dirsIn: mask() };
  kinds.forEach((k, s) => {
    if (k === LIT) {
      const code = codes[s] ?? 0;
      const lit = a.lit.get(code) ?? mask();
      setBit(lit, s);
      a.lit.set(code, lit);
    } else setBit(k === ONE ? a.one : k === STAR ? a.star : k === ANY ? a.any : k === DIRS ? a.dirs : a.dirsIn, s);
  });
  return a;
}

/** Work done by the last match (mask words touched), for tests that bound it. */
export const matchWork = { last: 0 };

const SLASH = 47;

/** Adds to `d` every state reachable without consuming (past `*`, `**` and `**\/`), in place. */
function closure(a: Automaton, d: Uint32Array): number {
  let work = 0;
  for (;;) {
    let changed = false;
    let carry1 = 0;
    let carry2 = 0;
    for (let w = 0; w < a.words; w++) {
      const e1 = (d[w] ?? 0) & ((a.star[w] ?? 0) | (a.any[w] ?? 0));
      const e2 = (d[w] ?? 0) & (a.dirs[w] ?? 0);
      const add = ((e1 << 1) | carry1 | (e2 << 2) | carry2) >>> 0;
      carry1 = e1 >>> 31;
      carry2 = e2 >>> 30;
      const before = d[w] ?? 0;
      const after = (before | add) >>> 0;
      if (after !== before) {
        d[w] = after;
        changed = true;
      }
      work++;
    }
    if (!changed) return work;
  }
}

/** Runs the automaton over `path` once, all live states in parallel; no backtracking. */
function run(a: Automaton, path: string): boolean {
  const { words } = a;
  let d = new Uint32Array(words);
  let n = new Uint32Array(words);
  const none = new Uint32Array(words);
  d[0] = 1;
  let work = closure(a, d);
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    const slash = c === SLASH;
    const lit = a.lit.get(c) ?? none;
    let carry = 0;
    let live = 0;
    for (let w = 0; w < words; w++) {
      const dw = d[w] ?? 0;
      const fwd = (dw & (lit[w] ?? 0)) | (slash ? 0 : dw & ((a.one[w] ?? 0) | (a.dirs[w] ?? 0)));
      const stay = slash
        ? dw & ((a.any[w] ?? 0) | (a.dirs[w] ?? 0))
        : dw & ((a.star[w] ?? 0) | (a.any[w] ?? 0) | (a.dirsIn[w] ?? 0));
      const back = slash ? ((dw & (a.dirsIn[w] ?? 0)) >>> 1) | (((d[w + 1] ?? 0) & (a.dirsIn[w + 1] ?? 0)) << 31) : 0;
      const out = ((fwd << 1) | carry | stay | back) >>> 0;
      carry = fwd >>> 31;
      n[w] = out;
      live |= out;
    }
    work += words + closure(a, n);
    [d, n] = [n, d];
    if (live === 0) break;
  }
  matchWork.last += work;
  return ((d[a.m >>> 5] ?? 0) & (1 << (a.m & 31))) !== 0;
}

const CACHE_MAX = 1024;
const cache = new Map<string, Automaton[] | null>();

/** The automata of a pattern's alternatives; null for a pattern past the caps. */
function automataOf(pattern: string): Automaton[] | null {
  if (cache.has(pattern)) return cache.get(pattern) ?? null;
  const alternatives = globProblem(pattern) === null ? expandBraces(pattern) : null;
  const compiled = alternatives ? alternatives.map(compile) : null;
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, compiled);
  return compiled;
}

/** The literal directory prefix of a pattern, up to its first glob character. */
function staticPrefix(pattern: string): string {
  const at = pattern.search(GLOB_CHARS);
  if (at < 0) return pattern;
  const head = pattern.slice(0, at);
  return head.slice(0, head.lastIndexOf('/') + 1);
}

/**
 * Whether a concrete repository path falls under a reservation pattern. A pattern past the caps
 * (only one that arrived by sync can be) matches by its literal prefix: a conservative answer.
 */
export function pathMatches(path: string, pattern: string): boolean {
  const p = normalizeGlob(path);
  const g = normalizeGlob(pattern);
  if (!hasGlob(g)) return p === g || p.startsWith(`${g}/`);
  matchWork.last = 0;
  const automata = g.length > MAX_GLOB_CHARS ? null : automataOf(g);
  if (!automata) return p.startsWith(staticPrefix(g));
  return automata.some((a) => run(a, p));
}
