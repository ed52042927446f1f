// What a search query says, read once: its content words (identifiers split at dots, underscores and
// camelCase; stopwords dropped), a light stem of each (for morphology: "balancing" meets
// "balanced"), the identifiers it names (`parseSetCookie`, `max_file_bytes`, `Agent.dispatch`), and
// whether it reads as a symbol lookup or as a question in words. Pure functions.

/** English function words and question words: they say nothing about which code answers. */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by can could ' +
    'did do does doing done down during each either else even ever every few for from further get gets got had has have having he her here ' +
    'him his how however i if in into is it its itself just let like may me might more most much must my no nor not of off often on once ' +
    'only or other our out over own per please same she should since so some still such than that the their them then there these they ' +
    'this those though through thus to too under until up upon us very via was way we well were what when where whether which while who ' +
    'whom whose why will with within without would yes yet you your yours ' +
    'happens happen work works tell told want wants need needs know thing things something anything make makes one ones instead'
  ).split(/\s+/),
);

export interface QueryAnalysis {
  /** The query as searched. */
  text: string;
  /** Content words, lower case, distinct, in order (identifier parts included). */
  terms: string[];
  /** Light stems of `terms` (same order, may repeat). */
  stems: string[];
  /** Compound identifiers the query names verbatim (camelCase, snake_case, dotted, PascalCase with an inner capital). */
  identifiers: string[];
  /** The query is mostly identifiers or code (a symbol lookup), not a question in words. */
  symbolLike: boolean;
}

/** `createServer` → create, Server; `MAX_QUERY_CHARS` → MAX, QUERY, CHARS. */
export function identifierParts(word: string): string[] {
  return word
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[\s_$.\-/]+/)
    .filter((p) => p !== '');
}

/** Whether a word is a compound identifier: inner capital after a lower-case letter, or joined by `_`, `.` between word characters. */
export function isIdentifier(word: string): boolean {
  return /\p{Ll}\p{Lu}/u.test(word) || /\w_\w/.test(word) || /[\p{L}_$][\w$]*\.[\p{L}_$]/u.test(word);
}

/**
 * A light English stem: the common inflection and derivation endings removed (plural, -ing, -ed,
 * -er, -ion, -ly, ...), so that related forms share a prefix. Not Porter: it only needs to bring
 * words of one family together for a prefix comparison.
 */
export function stem(word: string): string {
  const w = word.toLowerCase();
  if (w.length <= 4) return /[^su]s$/.test(w) ? w.slice(0, -1) : w;
  for (const suffix of ['ations', 'ation', 'ments', 'ment', 'ings', 'ing', 'ions', 'ion', 'ies', 'ied', 'ed', 'es', 'ly', 's']) {
    if (!w.endsWith(suffix)) continue;
    if (suffix === 'ies' || suffix === 'ied') {
      if (w.length - 3 >= 3) return w.slice(0, -3);
      continue;
    }
    // Keep at least 4 letters, and leave -ss, -us, -is words (process, status, analysis) whole.
    if (w.length - suffix.length < 4 || (suffix === 's' && /(ss|us|is)$/.test(w)) || (suffix === 'es' && !/(ch|sh|x|ss|zz)es$/.test(w))) continue;
    // -ies/-ied lose the i too: `cookies` → cook, `proxies` → prox (a prefix of cookie, proxy).
    return w.slice(0, w.length - suffix.length);
  }
  return w;
}

/** Whether two stems meet: equal, or the shorter (at least 3 letters) a prefix of the longer. */
export function stemsMeet(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 3 && long.startsWith(short);
}

const WORDS = /[\p{L}\p{N}_$][\p{L}\p{N}_$.]*[\p{L}\p{N}_$]|[\p{L}\p{N}_$]/gu;

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word.toLowerCase());
}

export function analyzeQuery(text: string): QueryAnalysis {
  const words = text.match(WORDS) ?? [];
  const terms: string[] = [];
  const seen = new Set<string>();
  const identifiers: string[] = [];
  let codeWords = 0;
  for (const word of words) {
    const ident = isIdentifier(word);
    if (ident) {
      identifiers.push(word);
      codeWords++;
    }
    for (const part of ident ? [word.toLowerCase(), ...identifierParts(word)] : identifierParts(word)) {
      const t = part.toLowerCase();
      if (t.length < 2 || STOPWORDS.has(t) || /^\d+$/.test(t) || seen.has(t)) continue;
      if (ident && t === word.toLowerCase()) continue; // the whole identifier is not a term; its parts are
      seen.add(t);
      terms.push(t);
    }
  }
  const contentWords = words.filter((w) => !STOPWORDS.has(w.toLowerCase())).length;
  return {
    text,
    terms,
    stems: terms.map(stem),
    identifiers,
    symbolLike: contentWords > 0 && codeWords / contentWords > 0.5,
  };
}
