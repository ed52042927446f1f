// The text a drawer's vector is made from. Prose drawers: their content. Code drawers (mined with a
// parser, so metadata names a `language`): their natural-language surface first (symbol names, the
// file's leading comment, the chunk's comments), then the rest of the code, all as plain words
// (identifiers split, punctuation dropped), which sentence embedders read far better than raw code.
// Drawers of a mined project start with their file's path as words. Content itself stays verbatim;
// re-embedding paths go through here.

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

/** The words of a project file's path (`docs/environment.md` → `docs environment md`); '' for other drawers. */
function pathWords(metadata: Record<string, unknown>): string {
  // A transcript's file name is a session's name, not a description of its content: projects only.
  return metadata.mode === 'projects' && typeof metadata.rel_path === 'string' ? codeWords(metadata.rel_path) : '';
}

/** The embedding input of a drawer with this content and metadata. */
export function embeddingInput(content: string, metadata: Record<string, unknown>): string {
  // A mined project file's path names its module or topic, the best cue a chunk has of what it is
  // about when its own text says little; it goes first, as words.
  const path = pathWords(metadata);
  const language = metadata.language;
  if (typeof language !== 'string' || language === '') return path === '' ? content : `${path}\n${content}`;
  const symbols = Array.isArray(metadata.symbols) ? metadata.symbols.filter((s): s is string => typeof s === 'string') : [];
  const pattern = commentPattern(language);
  const comments = content.match(pattern) ?? [];
  const code = content.replace(pattern, ' ');
  // What the module is for (the miner's `file_comment`): a function's own code seldom says it.
  const fileComment = typeof metadata.file_comment === 'string' ? metadata.file_comment : '';
  return [path, codeWords(symbols.join(' ')), fileComment, codeWords(comments.join(' ')), codeWords(code)].filter((p) => p !== '').join('\n');
}
