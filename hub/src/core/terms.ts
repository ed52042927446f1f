// Deterministic text features of verbatim drawer content: proper terms (names), topic keywords,
// sentences and mentions of known entity names. Pure functions; no I/O, no model, no randomness.

/** Words that never count as a name or a topic keyword on their own. */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also always am an and any are as at be because been before being below between both but by can could ' +
    'did do does doing done down during each either else even ever every few for from further get gets got had has have having he her here hers him his how ' +
    'however i if in into is it its itself just least less let like made make makes many may me might more most much must my never no nor not now of off ' +
    'often on once one only or other our ours out over own per please quite rather really same she should since so some still such than that the their ' +
    'theirs them then there these they thing things this those though through thus to too under until up upon us use used uses using very via was way we ' +
    'well were what when where whether which while who whom whose why will with within without would yes yet you your yours ' +
    'new old first last next time times today yesterday tomorrow note notes see also etc eg ie okay ok true false null none'
  ).split(/\s+/),
);

const WORD = /[A-Za-z][A-Za-z0-9]*(?:[-_.'][A-Za-z0-9]+)*/g;

/** True for words that look like names whatever their position: `SQLite`, `WAL`, `K8s`, `OAuth2`. */
function nameShaped(word: string): boolean {
  return /[A-Z]/.test(word.slice(1)) || /\d/.test(word);
}

/** True when the word at `at` opens a sentence, a line or a list item (its capital says nothing). */
function startsSentence(text: string, at: number): boolean {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  if (/^\s*([-*#>]+|\d+[.)])?\s*["'(`]?$/.test(text.slice(lineStart, at))) return true;
  return /[.!?:]["')`]?\s+["'(`]?$/.test(text.slice(Math.max(lineStart, at - 8), at));
}

/** Lower-case key of a term (what two texts must share to share the term). */
export function termKey(term: string): string {
  return term.toLowerCase();
}

/**
 * Proper terms: capitalized words not at the start of a sentence (or name-shaped anywhere); plain
 * ones join into runs of up to 3 (`Acme Corp`), stopwords and words under 3 letters dropped. Key → first spelling seen.
 */
export function properTerms(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let run: string[] = [];
  let lastEnd = -1;
  const flush = (): void => {
    if (run.length > 0) {
      const term = run.join(' ');
      if (!out.has(termKey(term))) out.set(termKey(term), term);
    }
    run = [];
  };
  const words = [...text.matchAll(WORD)].map((m) => ({ word: m[0].replace(/[.']+$/, ''), at: m.index, end: m.index + m[0].length, start: startsSentence(text, m.index) }));
  // A capital that opens a sentence says nothing, unless the same word is capitalized mid-sentence too.
  const named = new Set(words.filter((w) => !w.start && /^[A-Z]/.test(w.word)).map((w) => termKey(w.word)));
  for (const { word, at, end, start } of words) {
    const capitalized = /^[A-Z]/.test(word);
    const counts = word.length >= 3 && !STOPWORDS.has(word.toLowerCase()) && capitalized && (!start || nameShaped(word) || named.has(termKey(word)));
    // Plain capitalized words form runs (`Alice Smith`); name-shaped ones (`SQLite`, `WAL`) stand alone.
    const joins = counts && !nameShaped(word);
    const adjacent = lastEnd >= 0 && /^ $/.test(text.slice(lastEnd, at));
    if (joins && adjacent && run.length > 0 && run.length < 3) run.push(word);
    else {
      flush();
      if (counts) run.push(word);
      if (counts && !joins) flush();
    }
    lastEnd = end;
    if (!counts) flush();
  }
  flush();
  return out;
}

/** The `n` most frequent topic words (lower-case, ≥ 4 letters, not stopwords); ties by first use. */
export function keywords(text: string, n: number): string[] {
  const counts = new Map<string, { n: number; first: number }>();
  let i = 0;
  for (const m of text.matchAll(WORD)) {
    const word = m[0].toLowerCase().replace(/[.']+$/, '');
    i++;
    if (word.length < 4 || STOPWORDS.has(word) || /^\d/.test(word)) continue;
    const c = counts.get(word);
    if (c) c.n++;
    else counts.set(word, { n: 1, first: i });
  }
  return [...counts]
    .sort((a, b) => b[1].n - a[1].n || a[1].first - b[1].first)
    .slice(0, n)
    .map(([w]) => w);
}

/** Sentences (or lines, for text without sentence punctuation), trimmed and non-empty. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length > 0);
}

/** Which of `names` occur in `text` as whole words (case-insensitive); returns their keys. */
export function mentions(text: string, names: readonly string[]): string[] {
  const lower = text.toLowerCase();
  const found: string[] = [];
  for (const name of names) {
    const key = termKey(name.trim());
    if (key.length < 3) continue;
    let at = lower.indexOf(key);
    while (at >= 0) {
      const before = at === 0 ? ' ' : (lower[at - 1] ?? ' ');
      const after = lower[at + key.length] ?? ' ';
      if (!/[a-z0-9]/.test(before) && !/[a-z0-9]/.test(after)) {
        found.push(key);
        break;
      }
      at = lower.indexOf(key, at + 1);
    }
  }
  return found;
}
