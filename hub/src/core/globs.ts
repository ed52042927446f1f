// Path globs for file reservations: `*` and `?` within one path segment, `**` across segments,
// `{a,b}` alternatives; a path without glob characters also covers everything under it. Pure.

const GLOB_CHARS = /[*?{[]/;

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

const cache = new Map<string, RegExp>();

export function globToRegExp(pattern: string): RegExp {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let re = '';
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        const slash = pattern[i + 2] === '/';
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
  const compiled = new RegExp(`^${re}${')'.repeat(braces)}$`);
  cache.set(pattern, compiled);
  return compiled;
}

/** Whether a concrete repository path falls under a reservation pattern. */
export function pathMatches(path: string, pattern: string): boolean {
  const p = normalizeGlob(path);
  const g = normalizeGlob(pattern);
  if (!hasGlob(g)) return p === g || p.startsWith(`${g}/`);
  return globToRegExp(g).test(p);
}

/** The literal directory prefix of a pattern, up to its first glob character. */
function staticPrefix(pattern: string): string {
  const at = pattern.search(GLOB_CHARS);
  if (at < 0) return pattern;
  const head = pattern.slice(0, at);
  return head.slice(0, head.lastIndexOf('/') + 1);
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
