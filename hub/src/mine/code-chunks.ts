// Code-aware chunking with tree-sitter (its WASM build and the grammars' .wasm files from npm): cuts
// at function, method, class and top-level statement boundaries, merges small neighbours up to a
// target size, splits an oversized node at its members, and records line ranges, symbol names and
// the file's leading comment (each chunk carries it: what the module is for).
// web-tree-sitter and each grammar load on the first file of their language (never at CLI start).

import { createRequire } from 'node:module';
import { extname } from 'node:path';

import type { Language as TsLanguage, Node as TsNode, Parser as TsParser } from 'web-tree-sitter';

import type { SourceChunk } from '../memory/drawers/memory.js';
import { chunkRelations } from './code-relations.js';
import { chunksOfRows, lineStarts, lineWindowChunks, rowWindows, WINDOW_CHARS, type RowRange } from './line-windows.js';

/** Neighbouring units merge while the result stays within this many characters. */
export const CODE_TARGET = WINDOW_CHARS;
/** A unit larger than this is split at its members (then, failing that, into line windows). */
export const CODE_MAX = 1800;
/** A unit shorter than this merges with a neighbour even past CODE_TARGET (up to CODE_MAX). */
export const CODE_ALONE = 250;
/** Symbol names kept per chunk. */
const MAX_SYMBOLS = 24;
/** Characters of a file's leading comment carried by each of its chunks (bounds the metadata). */
export const FILE_COMMENT_CHARS = 1000;

export type CodeLanguage = 'typescript' | 'tsx' | 'javascript' | 'python' | 'go' | 'rust' | 'java';

const LANGUAGE_OF: Readonly<Record<string, CodeLanguage>> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
};

/** The grammar's .wasm file, as `require.resolve` finds it in its npm package. */
const GRAMMAR: Readonly<Record<CodeLanguage, string>> = {
  typescript: 'tree-sitter-typescript/tree-sitter-typescript.wasm',
  tsx: 'tree-sitter-typescript/tree-sitter-tsx.wasm',
  javascript: 'tree-sitter-javascript/tree-sitter-javascript.wasm',
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  go: 'tree-sitter-go/tree-sitter-go.wasm',
  rust: 'tree-sitter-rust/tree-sitter-rust.wasm',
  java: 'tree-sitter-java/tree-sitter-java.wasm',
};

/** The language a file is parsed as, by extension; undefined: not code this chunker parses. */
export function codeLanguageOf(file: string): CodeLanguage | undefined {
  return LANGUAGE_OF[extname(file).toLowerCase()];
}

/** Node types whose named children are the members an oversized node is split at. */
const CONTAINERS: ReadonlySet<string> = new Set([
  'program',
  'module',
  'source_file',
  'class_body',
  'interface_body',
  'enum_body',
  'object',
  'object_type',
  'statement_block',
  'block',
  'declaration_list',
  'field_declaration_list',
  'constructor_body',
  'switch_body',
  'enum_variant_list',
]);

/** Node types that define a named symbol (functions, methods, classes, types) in the six grammars. */
const DEFINITIONS: ReadonlySet<string> = new Set([
  'function_declaration',
  'generator_function_declaration',
  'class_declaration',
  'abstract_class_declaration',
  'class',
  'method_definition',
  'method_signature',
  'abstract_method_signature',
  'interface_declaration',
  'type_alias_declaration',
  'enum_declaration',
  'variable_declarator',
  'pair',
  'assignment_expression',
  'function_definition',
  'class_definition',
  'method_declaration',
  'type_spec',
  'function_item',
  'function_signature_item',
  'struct_item',
  'enum_item',
  'trait_item',
  'impl_item',
  'mod_item',
  'constructor_declaration',
  'record_declaration',
]);

/** Values that make a variable, pair or assignment a definition (`const f = () => ...`). */
const FUNCTION_VALUES: ReadonlySet<string> = new Set(['arrow_function', 'function_expression', 'function', 'generator_function', 'class']);

interface Loaded {
  Parser: typeof TsParser;
  languages: Map<CodeLanguage, Promise<TsLanguage>>;
}

let runtime: Promise<Loaded> | undefined;
const require = createRequire(import.meta.url);

async function loadRuntime(): Promise<Loaded> {
  const { Parser } = await import('web-tree-sitter');
  await Parser.init();
  return { Parser, languages: new Map() };
}

/** A parser for `language` (web-tree-sitter and the grammar load once per process, on first use). */
async function parserFor(language: CodeLanguage): Promise<TsParser> {
  runtime ??= loadRuntime().catch((err: unknown) => {
    runtime = undefined;
    throw err;
  });
  const loaded = await runtime;
  let grammar = loaded.languages.get(language);
  if (!grammar) {
    const { Language } = await import('web-tree-sitter');
    grammar = Language.load(require.resolve(GRAMMAR[language]));
    loaded.languages.set(language, grammar);
    grammar.catch(() => loaded.languages.delete(language));
  }
  const parser = new loaded.Parser();
  parser.setLanguage(await grammar);
  return parser;
}

/** The name a definition node declares, or undefined when it declares none worth indexing. */
function nameOf(node: TsNode): string | undefined {
  const field = (name: string): TsNode | null => node.childForFieldName(name);
  switch (node.type) {
    case 'variable_declarator':
    case 'pair': {
      const value = field('value');
      if (!value || !FUNCTION_VALUES.has(value.type)) return undefined;
      return (field('name') ?? field('key'))?.text;
    }
    case 'assignment_expression': {
      const right = field('right');
      if (!right || !FUNCTION_VALUES.has(right.type)) return undefined;
      const left = field('left')?.text;
      // `module.exports = class Application` is named by the class (the class node records it).
      if (right.type === 'class' && right.childForFieldName('name')) return undefined;
      return left?.replace(/\s+/g, '');
    }
    case 'class':
      return field('name')?.text;
    case 'method_declaration': {
      const name = field('name')?.text;
      // Go: `func (s *Server) Start()` is Server.Start.
      const receiver = field('receiver');
      const type = receiver?.descendantsOfType('type_identifier')[0]?.text;
      return name && type ? `${type}.${name}` : name;
    }
    case 'impl_item': {
      const type = field('type');
      return type?.descendantsOfType('type_identifier')[0]?.text ?? type?.text;
    }
    default:
      return field('name')?.text;
  }
}

interface Definition {
  qualified: string;
  row: number;
  endRow: number;
  node: TsNode;
}

/** Every named definition in the tree with its qualified name (`Application.listen`). */
function definitions(root: TsNode): Definition[] {
  const out: Definition[] = [];
  const walk = (node: TsNode, scope: readonly string[], depth: number): void => {
    if (depth > 40) return;
    let inner = scope;
    if (DEFINITIONS.has(node.type)) {
      const name = nameOf(node);
      if (name) {
        const qualified = name.startsWith(`${scope.at(-1) ?? '\u0000'}.`) ? name : [...scope, name].join('.');
        out.push({ qualified, row: node.startPosition.row, endRow: node.endPosition.row, node });
        inner = [...scope, name.includes('.') ? (name.split('.').at(-1) ?? name) : name];
        if (node.type === 'method_declaration' && name.includes('.')) inner = [...scope, ...name.split('.')];
      }
    }
    for (const child of node.namedChildren) if (child) walk(child, inner, depth + 1);
  };
  walk(root, [], 0);
  return out;
}

/** The node's member list to split at: the nearest container below it (breadth first, shallow). */
function containerOf(node: TsNode): TsNode | undefined {
  let level: TsNode[] = [node];
  for (let depth = 0; depth < 4 && level.length > 0; depth++) {
    for (const n of level) if (n !== node && CONTAINERS.has(n.type) && n.namedChildCount >= 2) return n;
    level = level.flatMap((n) => n.namedChildren.filter((c): c is TsNode => c !== null));
  }
  return undefined;
}

/** A run of whole lines and the syntax node(s) that start in it. */
interface Unit extends RowRange {
  nodes: TsNode[];
}

/**
 * Rows [from, to] cut at the start of each member (a member's leading comments go with it); two
 * members sharing a line stay together, so no cut is ever inside a line.
 */
function unitsOf(members: readonly TsNode[], from: number, to: number): Unit[] {
  const groups: Array<{ row: number; nodes: TsNode[] }> = [];
  let pendingComment: number | undefined;
  for (const m of members) {
    if (m.type === 'comment' || m.type === 'line_comment' || m.type === 'block_comment') {
      pendingComment ??= m.startPosition.row;
      continue;
    }
    const row = Math.min(to, Math.max(from, pendingComment ?? m.startPosition.row));
    pendingComment = undefined;
    const last = groups.at(-1);
    if (last && row <= last.row) last.nodes.push(m);
    else groups.push({ row, nodes: [m] });
  }
  const first = groups[0];
  if (!first) return [{ start: from, end: to, nodes: [] }];
  const units: Unit[] = first.row > from ? [{ start: from, end: first.row - 1, nodes: [] }] : [];
  groups.forEach((g, i) => units.push({ start: g.row, end: (groups[i + 1]?.row ?? to + 1) - 1, nodes: g.nodes }));
  return units;
}

function widthOf(starts: readonly number[], textLength: number, r: RowRange): number {
  return (starts[r.end + 1] ?? textLength) - (starts[r.start] ?? 0);
}

/** Splits units larger than CODE_MAX at their members, recursively; line windows as the last resort. */
function refine(units: readonly Unit[], text: string, starts: readonly number[], depth: number): RowRange[] {
  const out: RowRange[] = [];
  for (const u of units) {
    if (widthOf(starts, text.length, u) <= CODE_MAX) {
      out.push({ start: u.start, end: u.end });
      continue;
    }
    const node = u.nodes.length === 1 ? u.nodes[0] : undefined;
    const container = node && depth < 8 ? containerOf(node) : undefined;
    const members = container?.namedChildren.filter((c): c is TsNode => c !== null) ?? [];
    const inner = members.length >= 2 ? unitsOf(members, u.start, u.end) : [];
    if (inner.length >= 2) out.push(...refine(inner, text, starts, depth + 1));
    else out.push(...rowWindows(text, starts, u.start, u.end, CODE_TARGET));
  }
  return out;
}

/**
 * Consecutive ranges merged greedily up to CODE_TARGET characters, except that two ranges which both
 * define something (a function, a method, a class) and are not tiny stay apart: one function per
 * chunk where functions are substantial. A range under CODE_ALONE characters (a file header, a
 * trailing export) joins its neighbour even past CODE_TARGET (up to CODE_MAX) rather than stand alone.
 */
function mergeSmall(ranges: readonly RowRange[], starts: readonly number[], textLength: number, defs: readonly Definition[]): RowRange[] {
  const out: RowRange[] = [];
  const width = (r: RowRange): number => widthOf(starts, textLength, r);
  const defines = (r: RowRange): boolean => defs.some((d) => d.row >= r.start && d.row <= r.end);
  for (const r of ranges) {
    const last = out.at(-1);
    if (last) {
      const merged = width({ start: last.start, end: r.end });
      const tiny = Math.min(width(last), width(r)) < CODE_ALONE;
      if (tiny ? merged <= CODE_MAX : merged <= CODE_TARGET && !(defines(last) && defines(r))) {
        last.end = r.end;
        continue;
      }
    }
    out.push({ ...r });
  }
  return out;
}

/** Qualified names defined in `range`; none: the innermost definition around it. */
function symbolsIn(defs: readonly Definition[], range: RowRange): string[] {
  const inside = defs.filter((d) => d.row >= range.start && d.row <= range.end).map((d) => d.qualified);
  if (inside.length > 0) return [...new Set(inside)].slice(0, MAX_SYMBOLS);
  const around = defs.filter((d) => d.row < range.start && d.endRow >= range.end).at(-1);
  return around ? [around.qualified] : [];
}

const COMMENTS: ReadonlySet<string> = new Set(['comment', 'line_comment', 'block_comment']);
/** Nodes a file-level comment may sit right above and still describe the file (Go's package clause). */
const FILE_LEVEL: ReadonlySet<string> = new Set(['package_clause', 'package_declaration', 'import_statement', 'import_declaration', 'use_declaration']);

/**
 * The file's leading comment (what the module is for), markers stripped: the comments before its
 * first statement, or a Python module docstring. A comment directly above a definition (no blank
 * line) is that definition's doc, not the file's, and is left out. '' when there is none.
 */
function leadingComment(members: readonly TsNode[], language: CodeLanguage): string {
  const taken: TsNode[] = [];
  let next: TsNode | undefined;
  for (const m of members) {
    if (m.type === 'hash_bang_line') continue;
    if (!COMMENTS.has(m.type)) {
      next = m;
      break;
    }
    taken.push(m);
  }
  const last = taken.at(-1);
  if (last && next && next.startPosition.row === last.endPosition.row + 1 && !FILE_LEVEL.has(next.type)) taken.pop();
  let text = taken.map((c) => c.text).join('\n');
  if (text === '' && language === 'python' && next?.type === 'expression_statement' && next.firstNamedChild?.type === 'string') text = next.text;
  return text
    .replace(/^\s*(\/\/+!?|#+|\/\*+!?|\*+\/|\*|"""|''')/gm, '')
    .replace(/(\*\/|"""|''')\s*$/gm, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, FILE_COMMENT_CHARS);
}

/** The chunks of one parsed tree (pure; exported for the unit tests through codeChunks). */
function chunksOfTree(root: TsNode, text: string, language: CodeLanguage): SourceChunk[] {
  const starts = lineStarts(text);
  const lastRow = starts.length - 2;
  const members = root.namedChildren.filter((c): c is TsNode => c !== null);
  const defs = definitions(root);
  const fileComment = leadingComment(members, language);
  const ranges = mergeSmall(refine(unitsOf(members, 0, lastRow), text, starts, 0), starts, text.length, defs);
  const relations = chunkRelations(root, defs);
  return chunksOfRows(text, starts, ranges, (r) => {
    const symbols = symbolsIn(defs, r);
    return { language, ...(symbols.length > 0 ? { symbols } : {}), ...(fileComment !== '' ? { file_comment: fileComment } : {}), ...relations(r) };
  });
}

export interface CodeChunking {
  chunks: SourceChunk[];
  /** The parser used, or null when the file was cut into line windows (not code, or no parse). */
  language: CodeLanguage | null;
  /** Why the parser was not used for a code file (a load or parse failure). */
  fallback?: string;
}

/**
 * A file's chunks: parsed and cut at syntax boundaries when its extension names a known language,
 * line windows otherwise or when parsing fails. Chunks cover the text in order without overlap.
 */
export async function codeChunks(file: string, text: string): Promise<CodeChunking> {
  const language = codeLanguageOf(file);
  if (!language || text === '') return { chunks: lineWindowChunks(text), language: null };
  let parser: TsParser | undefined;
  try {
    parser = await parserFor(language);
    const tree = parser.parse(text);
    if (!tree) return { chunks: lineWindowChunks(text), language: null, fallback: 'the parser returned no tree' };
    try {
      return { chunks: chunksOfTree(tree.rootNode, text, language), language };
    } finally {
      tree.delete();
    }
  } catch (err) {
    return { chunks: lineWindowChunks(text), language: null, fallback: (err as Error).message };
  } finally {
    parser?.delete();
  }
}
