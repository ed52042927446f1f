// Path globs for file reservations: `*` and `?` within one path segment, `**` across segments,
// `{a,b}` alternatives; a path without glob characters also covers everything under it. Pure.
// Matching never backtracks: a pattern, groups included, compiles to one automaton run over the path
// once with every live state in parallel, through a lazily built DFA (glob-automaton.ts), so no glob
// can stall the hub (a regex of `*a*a*a…b` took seconds). Patterns are capped in length, wildcards and
// alternatives.

import { compileGlob, matchWork, parseGlob, releaseGlob, runGlob, runTokens, type GlobAutomaton, type GlobNode } from './glob-automaton.js';

export { matchWork };

const GLOB_CHARS = /[*?{[]/;

/** Longest reservation pattern accepted, in characters. */
export const MAX_GLOB_CHARS = 256;
/** Most wildcards (`*`, `**`, `?`) one pattern may hold. */
export const MAX_GLOB_WILDCARDS = 32;
/** Most alternatives a pattern's `{a,b}` groups may expand to. */
export const MAX_GLOB_ALTERNATIVES = 16;

/** A reservation path in canonical form: forward slashes, no leading `./` or `/`, no trailing `/`. */
export function normalizeGlob(raw: string): string {
  let p = raw.trim().replace(/\\/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  p = p.replace(/^\/+/, '').replace(/\/{2,}/g, '/');
  if (p.endsWith('/')) p = `${p.replace(/\/+$/, '')}/**`;
  return p;
}

export function hasGlob(pattern: string): boolean {
  return GLOB_CHARS.test(pattern);
}

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

// Wildcards are read within one run of the pattern, so each run's wildcards are encoded before the
// groups are expanded (the expansion only counts and measures alternatives for the caps).
const W_STAR = '\uE000';
const W_ANY = '\uE001';
const W_DIRS = '\uE002';
const W_ONE = '\uE003';

function encodeWildcards(run: string): string {
  return runTokens(run)
    .map((w) => (w === '**/' ? W_DIRS : w === '**' ? W_ANY : w === '*' ? W_STAR : w === '?' ? W_ONE : w))
    .join('');
}

/**
 * The pattern with its `{a,b}` groups expanded (nested allowed, an unclosed group runs to the end),
 * wildcards encoded; null past the cap. Only the caps use it: matching runs one automaton for the
 * whole pattern, groups included.
 */
export function expandBraces(pattern: string): string[] | null {
  const expandSeq = (seq: GlobNode[]): string[] | null => {
    let out = [''];
    for (const node of seq) {
      if (typeof node === 'string') {
        const run = encodeWildcards(node);
        out = out.map((s) => s + run);
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
  return expandSeq(parseGlob(pattern));
}

const CACHE_MAX = 1024;
const cache = new Map<string, GlobAutomaton | null>();

/** Drops every compiled pattern (and gives its DFA states back): for tests that change the DFA caps. */
export function clearGlobCache(): void {
  for (const a of cache.values()) if (a) releaseGlob(a);
  cache.clear();
}

/** The automaton of a pattern; null for a pattern past the caps. */
function automatonOf(pattern: string): GlobAutomaton | null {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  const compiled = globProblem(pattern) === null ? compileGlob(parseGlob(pattern)) : null;
  if (cache.size >= CACHE_MAX) {
    const oldest = cache.keys().next().value as string;
    const dropped = cache.get(oldest);
    if (dropped) releaseGlob(dropped);
    cache.delete(oldest);
  }
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
  const automaton = g.length > MAX_GLOB_CHARS ? null : automatonOf(g);
  if (!automaton) return p.startsWith(staticPrefix(g));
  return runGlob(automaton, p);
}

/**
 * Whether two patterns may name a common path. Exact when either is literal; for two globs it is
 * conservative (their literal directory prefixes nest), so a reported overlap may be a near miss.
 */
export function globsOverlap(a: string, b: string): boolean {
  const x = normalizeGlob(a);
  const y = normalizeGlob(b);
  if (!hasGlob(x) || !hasGlob(y)) return pathMatches(x, y) || pathMatches(y, x);
  const px = staticPrefix(x);
  const py = staticPrefix(y);
  return px.startsWith(py) || py.startsWith(px);
}
