// The write verbs of Cypher, found lexically so /cypher can refuse a write (403) before it looks at
// the backend: the spec says write verbs are refused whatever the backend. Strings, comments,
// backticked names, parameters, properties (n.set), labels (:Merge) and map keys ({create: 1}) are
// never verbs. The pgvector backend still runs every query in a READ ONLY transaction as well.

const WRITE_VERBS: ReadonlySet<string> = new Set(['CREATE', 'MERGE', 'SET', 'DELETE', 'DETACH', 'REMOVE', 'DROP']);

const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;

/** The first write verb of `cypher` (upper case), or null when it has none. */
export function cypherWriteVerb(cypher: string): string | null {
  let i = 0;
  const n = cypher.length;
  /** The last significant character before the current token (whitespace and comments skipped). */
  let before = '';
  while (i < n) {
    const c = cypher[i] as string;
    const next = cypher[i + 1];
    if (c === '/' && next === '/') {
      const end = cypher.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = cypher.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      i = skipQuoted(cypher, i, c);
      before = c;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(cypher);
    if (word) {
      const text = word[0];
      i += text.length;
      if (WRITE_VERBS.has(text.toUpperCase()) && !/[.:$]/.test(before) && !/^\s*:/.test(cypher.slice(i, i + 64)))
        return text.toUpperCase();
      before = 'w';
      continue;
    }
    if (!/\s/.test(c)) before = c;
    i++;
  }
  return null;
}

/** The index after the quoted run that starts at `start` (backslash escapes; a doubled quote in backticks). */
function skipQuoted(text: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && quote !== '`') {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (quote === '`' && text[i + 1] === '`') {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return text.length;
}
