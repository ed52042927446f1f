// What a search hit shows a person: its location (`path:line_start-line_end`, the path relative to
// the mined root) and the best-matching few whole lines of the drawer with the query terms marked.
// Pure functions of the drawer and the query; the CLI, MCP and the dashboard render their output.

/** Where a drawer's text sits in its source file (lines 1-based, inclusive). */
export interface HitLocation {
  path: string;
  line_start: number;
  line_end: number;
}

/** The best-matching lines of a drawer; `marks` are [start, end) offsets in `text` of query terms. */
export interface HitSnippet {
  text: string;
  line_start: number | null;
  marks: Array<[number, number]>;
}

/** Lines a snippet shows at most. */
export const SNIPPET_LINES = 5;
/** A longer line is clipped around its first match (with an ellipsis) so one line cannot flood a result. */
export const SNIPPET_LINE_CHARS = 240;

/** Words too common to mark or to choose lines by. */
const STOPWORDS: ReadonlySet<string> = new Set(
  'a an and are as at be by can did do does for from has have how i if in into is it its me my of on or our so than that the their then there these this to was we were what when where which who why will with you your'.split(' '),
);

/** Query terms: lower-case words (identifiers split at dots, underscores and camelCase too), no stopwords. */
export function snippetTerms(query: string): string[] {
  const words = query.match(/[\p{L}\p{N}_$]+/gu) ?? [];
  const out = new Set<string>();
  for (const w of words) {
    for (const part of [w, ...identifierParts(w)]) {
      const t = part.toLowerCase();
      if (t.length >= 2 && !STOPWORDS.has(t)) out.add(t);
    }
  }
  return [...out];
}

/** `createServer` → create, server; `max_file_bytes` → max, file, bytes. */
function identifierParts(word: string): string[] {
  return word
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[\s_$]+/)
    .filter((p) => p !== '' && p !== word);
}

/** Whether a word of the text matches a query term: equal, or one a prefix of the other over ≥ 4 letters. */
function matches(word: string, term: string): boolean {
  if (word === term) return true;
  const short = word.length < term.length ? word : term;
  const long = short === word ? term : word;
  return short.length >= 4 && long.startsWith(short);
}

/** Marks of the query terms in one line: [start, end) offsets of matching words and identifier parts. */
function lineMarks(line: string, terms: readonly string[]): { marks: Array<[number, number]>; hit: Set<string> } {
  const marks: Array<[number, number]> = [];
  const hit = new Set<string>();
  for (const m of line.matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = m[0];
    const at = m.index;
    // The word itself, then its camelCase parts (marked where they sit inside the word).
    const whole = terms.find((t) => matches(word.toLowerCase(), t));
    if (whole) {
      marks.push([at, at + word.length]);
      hit.add(whole);
      continue;
    }
    let offset = 0;
    for (const part of identifierParts(word)) {
      const from = word.indexOf(part, offset);
      offset = from + part.length;
      const term = terms.find((t) => matches(part.toLowerCase(), t));
      if (term && from >= 0) {
        marks.push([at + from, at + from + part.length]);
        hit.add(term);
      }
    }
  }
  return { marks, hit };
}

/** `line` clipped to SNIPPET_LINE_CHARS around its first mark; the marks shifted to match. */
function clip(line: string, marks: ReadonlyArray<[number, number]>): { line: string; marks: Array<[number, number]> } {
  if (line.length <= SNIPPET_LINE_CHARS) return { line, marks: [...marks] };
  const focus = marks[0]?.[0] ?? 0;
  const from = Math.max(0, Math.min(focus - Math.floor(SNIPPET_LINE_CHARS / 3), line.length - SNIPPET_LINE_CHARS));
  const to = from + SNIPPET_LINE_CHARS;
  const head = from > 0 ? '…' : '';
  const body = line.slice(from, to) + (to < line.length ? '…' : '');
  const kept = marks
    .filter(([s, e]) => s >= from && e <= to)
    .map(([s, e]): [number, number] => [s - from + head.length, e - from + head.length]);
  return { line: head + body, marks: kept };
}

/**
 * The few whole lines of `content` that best match `query` (the window of up to SNIPPET_LINES lines
 * holding the most distinct query terms, then the most matches; the earliest on a tie), with the
 * matches marked. `lineStart` is the drawer's first line in its file (null: not known), so the
 * snippet's own `line_start` is a line of the file. No match: the first non-blank lines.
 */
export function bestSnippet(content: string, query: string, lineStart: number | null): HitSnippet {
  const lines = content.replace(/\r\n/g, '\n').split('\n');
  while (lines.length > 1 && lines.at(-1)?.trim() === '') lines.pop();
  const terms = snippetTerms(query);
  const perLine = lines.map((l) => (terms.length === 0 ? { marks: [], hit: new Set<string>() } : lineMarks(l, terms)));
  const span = Math.min(SNIPPET_LINES, lines.length);
  let best = -1;
  let bestScore = -1;
  for (let s = 0; s + span <= lines.length; s++) {
    const seen = new Set<string>();
    let count = 0;
    for (let i = s; i < s + span; i++) {
      for (const t of perLine[i]?.hit ?? []) seen.add(t);
      count += perLine[i]?.marks.length ?? 0;
    }
    if (count === 0) continue;
    // Centre the best line: a window whose matches sit in its middle wins a tie on distinct terms.
    const score = seen.size * 1000 + Math.min(count, 99) * 10 - Math.abs(firstMatch(perLine, s, span) - s - Math.floor(span / 2));
    if (score > bestScore) {
      bestScore = score;
      best = s;
    }
  }
  let from = best;
  if (from < 0) from = Math.max(0, lines.findIndex((l) => l.trim() !== ''));
  let to = Math.min(lines.length, from + span);
  // Blank lines at the window's edges show nothing: drop them.
  while (to - 1 > from && lines[to - 1]?.trim() === '') to--;
  while (from < to - 1 && lines[from]?.trim() === '') from++;
  let text = '';
  const marks: Array<[number, number]> = [];
  for (let i = from; i < to; i++) {
    if (i > from) text += '\n';
    const c = clip(lines[i] ?? '', perLine[i]?.marks ?? []);
    for (const [s, e] of c.marks) marks.push([text.length + s, text.length + e]);
    text += c.line;
  }
  return { text, line_start: lineStart === null ? null : lineStart + from, marks };
}

function firstMatch(perLine: ReadonlyArray<{ marks: unknown[] }>, s: number, span: number): number {
  for (let i = s; i < s + span; i++) if ((perLine[i]?.marks.length ?? 0) > 0) return i;
  return s;
}

/** A drawer's location: its file (relative to the mined root when recorded) and lines; null when unknown. */
export function hitLocation(sourceFile: string | null, metadata: Record<string, unknown>): HitLocation | null {
  const start = metadata.line_start;
  const end = metadata.line_end;
  if (typeof start !== 'number' || typeof end !== 'number') return null;
  const rel = typeof metadata.rel_path === 'string' && metadata.rel_path !== '' ? metadata.rel_path : sourceFile;
  if (!rel) return null;
  return { path: rel, line_start: start, line_end: end };
}

/** The `location` and `snippet` of a search hit (the contract fields of SearchHit). */
export function hitPresentation(
  drawer: { content: string; source_file: string | null; metadata: Record<string, unknown> },
  query: string,
): { location: HitLocation | null; snippet: HitSnippet } {
  const location = hitLocation(drawer.source_file, drawer.metadata);
  return { location, snippet: bestSnippet(drawer.content, query, location?.line_start ?? null) };
}
