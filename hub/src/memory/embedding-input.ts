// The text a drawer's vector is made from. Prose drawers: their content. Code drawers (mined with a
// parser, so metadata names a `language`): the file's path, the symbol names, the comments, then the
// rest of the code, all as plain words (identifiers split, punctuation dropped), which sentence
// embedders read far better than raw code. Content itself stays verbatim; re-embedding paths go through here.

/** `this.compose(this.middleware)` → `this compose this middleware`; camelCase and snake_case split. */
export function codeWords(code: string): string {
  return code
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Comments of C-family code (`//`, `/* *\/`) and, for Python, `#` lines. */
function commentPattern(language: string): RegExp {
  return language === 'python' ? /#[^\n]*/g : /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;
}

/** The embedding input of a drawer with this content and metadata. */
export function embeddingInput(content: string, metadata: Record<string, unknown>): string {
  const language = metadata.language;
  if (typeof language !== 'string' || language === '') return content;
  const symbols = Array.isArray(metadata.symbols) ? metadata.symbols.filter((s): s is string => typeof s === 'string') : [];
  const pattern = commentPattern(language);
  const comments = content.match(pattern) ?? [];
  const code = content.replace(pattern, ' ');
  // The path names the module (`hub/src/core/secrets.ts`: hub src core secrets ts), the best cue a
  // chunk has of what it is about when its own code says little.
  const path = typeof metadata.rel_path === 'string' ? metadata.rel_path : '';
  return [codeWords(path), codeWords(symbols.join(' ')), codeWords(comments.join(' ')), codeWords(code)].filter((p) => p !== '').join('\n');
}
