// The words a drawer is found by besides its content: the symbols its chunk defines (`Application.listen`)
// and the tokens of its file path (`keywords`), the parts of the compound identifiers its content
// uses (`identifiers`), split at dots, underscores and camelCase, and its file's leading comment
// (`context`). Backends with a full-text index on further fields index these texts (content stays verbatim).

/** The parts of one identifier: `createServer` → create, Server; `MAX_QUERY_CHARS` → MAX, QUERY, CHARS. */
function partsOf(word: string): string[] {
  return word
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[\s_$]+/)
    .filter((p) => p !== '');
}

const WORD = /[^\p{L}\p{N}_$]+/u;

/** `createServer` → createServer create server; `lib/application.js` → lib application js. */
function wordsOf(text: string): string[] {
  const out: string[] = [];
  for (const word of text.split(WORD)) {
    if (word === '') continue;
    out.push(word);
    const parts = partsOf(word);
    if (parts.length > 1) out.push(...parts);
  }
  return out;
}

/** The keyword text of a drawer's metadata (`symbols`, `rel_path`); '' when it has neither. */
export function searchKeywords(metadata: Record<string, unknown>): string {
  const sources: string[] = [];
  if (Array.isArray(metadata.symbols)) for (const s of metadata.symbols) if (typeof s === 'string') sources.push(s);
  if (typeof metadata.rel_path === 'string') sources.push(metadata.rel_path);
  const seen = new Set<string>();
  for (const w of sources.flatMap(wordsOf)) seen.add(w);
  return [...seen].join(' ');
}

/**
 * The parts of every compound identifier of a code drawer's content, one per use (so BM25 counts how
 * often a word is used): `this.listDrawers(http.createServer())` → `list Drawers create Server`. A
 * question in words ("list the drawers") cannot match the single token `listDrawers` in the content.
 * Plain words are left out (the content's own index has them); '' for a drawer that is not code
 * (its metadata names no `language`).
 */
export function identifierWords(content: string, metadata: Record<string, unknown>): string {
  if (typeof metadata.language !== 'string' || metadata.language === '') return '';
  const out: string[] = [];
  for (const word of content.split(WORD)) {
    if (word === '') continue;
    const parts = partsOf(word);
    if (parts.length > 1) out.push(...parts);
  }
  return out.join(' ');
}

/** The leading comment of the file a code drawer was cut from (the miner's `file_comment`); '' if none. */
export function fileContext(metadata: Record<string, unknown>): string {
  return typeof metadata.file_comment === 'string' ? metadata.file_comment : '';
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : [];
}

/**
 * What a code chunk's definitions say they are (issue 32 enrichment, mine/code-relations.ts): their
 * signatures and doc comments, identifiers split into words beside their verbatim form; '' otherwise.
 */
export function docWords(metadata: Record<string, unknown>): string {
  const doc = typeof metadata.doc === 'string' ? metadata.doc : '';
  return [...stringList(metadata.signatures), doc].flatMap(wordsOf).join(' ');
}

