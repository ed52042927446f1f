// The words a drawer is found by besides its content: the symbols its chunk defines (`Application.listen`)
// and the tokens of its file path, identifiers split at dots, underscores and camelCase. Backends
// with a full-text index on a second field index this text (content itself stays verbatim).

/** `createServer` → createServer create server; `lib/application.js` → lib application js. */
function wordsOf(text: string): string[] {
  const out: string[] = [];
  for (const word of text.split(/[^\p{L}\p{N}_$]+/u)) {
    if (word === '') continue;
    out.push(word);
    const parts = word
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
      .split(/[\s_$]+/)
      .filter((p) => p !== '');
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
