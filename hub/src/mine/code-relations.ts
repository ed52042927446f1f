// Chunk enrichment (issue 32): what a code chunk is about besides its own text, read from the syntax
// tree the chunker already parsed. For each chunk: the signatures of the definitions it holds (or the
// one around it), their doc comments, the names it calls and the names of the definitions in the same
// file that call what it defines (the file's reference graph). Stored in the drawer's metadata and
// indexed beside the verbatim content (core/search-keywords.ts `relations`); content is never changed.

import type { Node as TsNode } from 'web-tree-sitter';

import type { RowRange } from './line-windows.js';

/** Characters kept of one signature, and of a chunk's doc comments together. */
const SIGNATURE_CHARS = 160;
const DOC_CHARS = 600;
/** Distinct names kept per chunk. */
const MAX_CALLS = 32;
const MAX_CALLERS = 16;
const MAX_SIGNATURES = 8;

/** Call nodes of the seven grammars: the field naming the callee. */
const CALLS: Readonly<Record<string, string>> = {
  call_expression: 'function', // JS/TS, Go, Rust
  new_expression: 'constructor', // JS/TS
  call: 'function', // Python
  method_invocation: 'name', // Java
  object_creation_expression: 'type', // Java
};

const COMMENTS: ReadonlySet<string> = new Set(['comment', 'line_comment', 'block_comment']);
/** Wrappers whose leading comment documents the definition inside (`export function`, decorators). */
const WRAPPERS: ReadonlySet<string> = new Set(['export_statement', 'decorated_definition', 'lexical_declaration', 'variable_declaration', 'expression_statement']);

export interface DefinitionNode {
  qualified: string;
  row: number;
  endRow: number;
  node: TsNode;
}

export interface ChunkRelations {
  signatures?: string[];
  doc?: string;
  calls?: string[];
  callers?: string[];
}

/** The last plain name of a callee expression: `this.compose` → compose, `pkg.New[T]` → New. */
function calleeName(text: string): string | undefined {
  const names = text.replace(/<[^<>]*>|\[[^[\]]*\]/g, '').match(/[\p{L}_$][\p{L}\p{N}_$]*/gu);
  const last = names?.at(-1);
  return last && last.length >= 2 ? last : undefined;
}

/** Comment text with its markers stripped, whitespace folded. */
function commentText(text: string): string {
  return text
    .replace(/^\s*(\/\/+!?|#+|\/\*+!?|\*+\/|\*|"""|''')/gm, '')
    .replace(/(\*\/|"""|''')\s*$/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The doc comment of a definition: the comments right above it (or its wrapper), or a Python docstring. */
function docOf(node: TsNode): string {
  let anchor: TsNode = node;
  for (let up = node.parent; up && WRAPPERS.has(up.type) && up.startPosition.row === anchor.startPosition.row; up = up.parent) anchor = up;
  const taken: string[] = [];
  let row = anchor.startPosition.row;
  for (let prev = anchor.previousNamedSibling; prev && COMMENTS.has(prev.type) && prev.endPosition.row >= row - 1; prev = prev.previousNamedSibling) {
    taken.unshift(prev.text);
    row = prev.startPosition.row;
  }
  if (taken.length === 0) {
    // Python: the body's first statement is a string.
    const first = node.childForFieldName('body')?.firstNamedChild;
    if (first?.type === 'expression_statement' && first.firstNamedChild?.type === 'string') taken.push(first.text);
  }
  return commentText(taken.join('\n'));
}

/** The first line of a definition, without its opening brace: `listen(...args) {` → `listen(...args)`. */
function signatureOf(node: TsNode): string {
  const line = node.text.split('\n', 1)[0] ?? '';
  // A one-line definition keeps its head only: `sum(a, b) { return a + b; }` → `sum(a, b)`.
  return line
    .replace(/\)(\s*:\s*[^{=]*?)?\s*(\{|=>).*$/, ')$1')
    .replace(/\s*[{:]?\s*$/, '')
    .trim()
    .slice(0, SIGNATURE_CHARS);
}

/** Every call in the tree: the row it starts on and the callee's name. */
function callsOf(root: TsNode): Array<{ row: number; name: string }> {
  const out: Array<{ row: number; name: string }> = [];
  for (const node of root.descendantsOfType(Object.keys(CALLS))) {
    if (!node) continue;
    const field = CALLS[node.type];
    const callee = field ? node.childForFieldName(field) : null;
    const name = callee ? calleeName(callee.text) : undefined;
    if (name) out.push({ row: node.startPosition.row, name });
  }
  return out;
}

function lastPart(qualified: string): string {
  return qualified.split('.').at(-1) ?? qualified;
}

/**
 * A function from a chunk's row range to its relations. The reference graph is the file's own:
 * callers are definitions of this file whose bodies call a name this chunk defines.
 */
export function chunkRelations(root: TsNode, defs: readonly DefinitionNode[]): (r: RowRange) => ChunkRelations {
  const calls = callsOf(root);
  // Name -> the qualified definitions whose rows hold a call of it (the innermost definition around the call).
  const callersOf = new Map<string, Set<string>>();
  for (const c of calls) {
    const around = defs.filter((d) => d.row <= c.row && d.endRow >= c.row).at(-1);
    if (!around) continue;
    let set = callersOf.get(c.name);
    if (!set) callersOf.set(c.name, (set = new Set()));
    set.add(around.qualified);
  }
  return (r) => {
    const inside = defs.filter((d) => d.row >= r.start && d.row <= r.end);
    const held = inside.length > 0 ? inside : defs.filter((d) => d.row < r.start && d.endRow >= r.end).slice(-1);
    const signatures = [...new Set(held.map((d) => signatureOf(d.node)).filter((s) => s !== ''))].slice(0, MAX_SIGNATURES);
    const doc = [...new Set(held.map((d) => docOf(d.node)).filter((s) => s !== ''))].join(' ').slice(0, DOC_CHARS);
    const own = new Set(held.map((d) => d.qualified));
    const called = [...new Set(calls.filter((c) => c.row >= r.start && c.row <= r.end).map((c) => c.name))].slice(0, MAX_CALLS);
    const callers = new Set<string>();
    for (const d of held) for (const caller of callersOf.get(lastPart(d.qualified)) ?? []) if (!own.has(caller)) callers.add(caller);
    return {
      ...(signatures.length > 0 ? { signatures } : {}),
      ...(doc !== '' ? { doc } : {}),
      ...(called.length > 0 ? { calls: called } : {}),
      ...(callers.size > 0 ? { callers: [...callers].slice(0, MAX_CALLERS) } : {}),
    };
  };
}
