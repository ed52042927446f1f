// The code chunker per language (real tree-sitter grammars): cuts at definition boundaries, line
// ranges that match the text, symbol names, an oversized class split at its members, line windows
// for other files and long lines; chunks always cover the file in order, never cut inside a line.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { SourceChunk } from '../../hub/src/memory/drawers/memory.js';
import { CODE_MAX, codeChunks, codeLanguageOf } from '../../hub/src/mine/code-chunks.js';
import { LONG_LINE, lineWindowChunks, WINDOW_CHARS } from '../../hub/src/mine/line-windows.js';

/** Invariants of every chunking: in order, no gap, no overlap, whole lines, line numbers that match. */
function checkCover(text: string, chunks: readonly SourceChunk[]): void {
  expect(chunks.length).toBeGreaterThan(0);
  let at = 0;
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.start).toBe(at);
    expect(c.text).toBe(text.slice(c.start, c.end));
    at = c.end;
    if (c.text.length <= LONG_LINE) {
      expect(c.start === 0 || text[c.start - 1] === '\n').toBe(true);
      expect(c.end === text.length || text[c.end - 1] === '\n').toBe(true);
    }
    const first = text.slice(0, c.start).split('\n').length;
    expect(c.metadata?.line_start).toBe(first);
    const lineEnd = c.metadata?.line_end as number;
    expect(lineEnd).toBeGreaterThanOrEqual(first);
    // line_end is the chunk's last line with text in it.
    const lines = text.split('\n');
    expect(lines[lineEnd - 1]?.trim()).not.toBe('');
    expect(c.text.split('\n').slice(lineEnd - first + 1).every((l) => l.trim() === '')).toBe(true);
  });
  expect(at).toBe(text.length);
}

/** The chunk whose lines hold `needle`. */
function chunkWith(text: string, chunks: readonly SourceChunk[], needle: string): SourceChunk {
  const line = text.split('\n').findIndex((l) => l.includes(needle)) + 1;
  const c = chunks.find((x) => (x.metadata?.line_start as number) <= line && (x.metadata?.line_end as number) >= line);
  if (!c) throw new Error(`no chunk holds ${needle}`);
  return c;
}

/** A method of `lines` lines of real statements (about 40 characters each). */
const body = (name: string, lines: number, indent = '    '): string =>
  Array.from({ length: lines }, (_, i) => `${indent}const ${name}Value${i} = compute(${i}, "${name}");`).join('\n');

describe('code chunks', () => {
  it('picks the grammar by extension; other files are not parsed', () => {
    expect(['a.ts', 'a.tsx', 'a.js', 'a.mjs', 'a.py', 'a.go', 'a.rs', 'a.java', 'a.md'].map(codeLanguageOf)).toEqual([
      'typescript',
      'tsx',
      'javascript',
      'javascript',
      'python',
      'go',
      'rust',
      'java',
      undefined,
    ]);
  });

  it('TypeScript: a class too big for one chunk is split at its methods, each named Class.method', async () => {
    const methods = ['open', 'append', 'compact', 'close'].map((m) => `  /** ${m} the log. */\n  ${m}(): void {\n${body(m, 14)}\n  }`);
    const text = `import { compute } from './compute.js';\n\nexport class EventLog {\n  private size = 0;\n\n${methods.join('\n\n')}\n}\n\nexport function helper(): number {\n  return 1;\n}\n`;
    expect(text.length).toBeGreaterThan(CODE_MAX);
    const { chunks, language } = await codeChunks('/r/src/event-log.ts', text);
    expect(language).toBe('typescript');
    checkCover(text, chunks);
    for (const m of ['open', 'append', 'compact', 'close']) {
      const c = chunkWith(text, chunks, `${m}(): void {`);
      expect(c.metadata?.symbols).toContain(`EventLog.${m}`);
      // The whole method, with its doc comment, is in one chunk.
      expect(c.text).toContain(`/** ${m} the log. */`);
      expect(c.text).toContain(`${m}Value13`);
    }
    expect(chunkWith(text, chunks, 'compact(): void').text).not.toContain('append(): void');
    expect(chunkWith(text, chunks, 'export function helper').metadata?.symbols).toContain('helper');
  });

  it('JavaScript: `module.exports = class X` methods and arrow functions are named', async () => {
    const text = `'use strict'\n\nmodule.exports = class Application {\n  listen (...args) {\n${body('listen', 30)}\n  }\n\n  callback () {\n${body('callback', 30)}\n  }\n}\n\nconst respond = (ctx) => {\n  return ctx.body\n}\n`;
    const { chunks } = await codeChunks('/r/lib/application.js', text);
    checkCover(text, chunks);
    expect(chunkWith(text, chunks, 'listen (...args)').metadata?.symbols).toContain('Application.listen');
    expect(chunkWith(text, chunks, 'callback () {').metadata?.symbols).toContain('Application.callback');
    expect(chunkWith(text, chunks, 'const respond').metadata?.symbols).toContain('respond');
  });

  it('Python: functions and classes, methods as Class.method; small neighbours merge', async () => {
    const text = [
      'import os',
      'import sys',
      '',
      '',
      'class Inventory:',
      '    def add(self, sku):',
      ...Array.from({ length: 30 }, (_, i) => `        self.items_${i} = os.path.join(sku, "${i}")`),
      '',
      '    def remove(self, sku):',
      ...Array.from({ length: 30 }, (_, i) => `        del self.items_${i}  # item number ${i}`),
      '',
      '',
      'def report(inventory):',
      '    return sorted(inventory.items)',
      '',
    ].join('\n');
    const { chunks, language } = await codeChunks('/r/inventory.py', text);
    expect(language).toBe('python');
    checkCover(text, chunks);
    expect(chunkWith(text, chunks, 'def add').metadata?.symbols).toContain('Inventory.add');
    expect(chunkWith(text, chunks, 'def remove').metadata?.symbols).toContain('Inventory.remove');
    // The imports are too small to stand alone: they share a chunk with what follows.
    expect(chunkWith(text, chunks, 'import os').text).toContain('import sys');
    expect(chunkWith(text, chunks, 'def report').metadata?.symbols).toContain('report');
  });

  it('Go: methods are named Receiver.Method; Rust: impl methods Type.method; Java: Class.method', async () => {
    const go = `package demo\n\ntype Server struct {\n\tport int\n}\n\n// Start listens.\nfunc (s *Server) Start() error {\n${body('start', 30, '\t')}\n\treturn nil\n}\n\nfunc New() *Server {\n${body('make', 30, '\t')}\n\treturn &Server{}\n}\n`;
    const g = await codeChunks('/r/server.go', go);
    checkCover(go, g.chunks);
    expect(chunkWith(go, g.chunks, 'func (s *Server) Start').metadata?.symbols).toContain('Server.Start');
    expect(chunkWith(go, g.chunks, 'func New()').metadata?.symbols).toContain('New');

    const rs = `struct Bucket { tokens: f64 }\n\nimpl Bucket {\n    fn refill(&mut self) {\n${body('refill', 30, '        ').replace(/const /g, 'let ')}\n    }\n\n    fn take(&mut self) -> bool {\n${body('take', 30, '        ').replace(/const /g, 'let ')}\n        true\n    }\n}\n`;
    const r = await codeChunks('/r/bucket.rs', rs);
    checkCover(rs, r.chunks);
    expect(chunkWith(rs, r.chunks, 'fn refill').metadata?.symbols).toContain('Bucket.refill');
    expect(chunkWith(rs, r.chunks, 'fn take').metadata?.symbols).toContain('Bucket.take');

    const java = `package demo;\n\npublic class Limiter {\n  public boolean allow(String key) {\n${body('allow', 30, '    ').replace(/const /g, 'int ')}\n    return true;\n  }\n\n  public void reset() {\n${body('reset', 30, '    ').replace(/const /g, 'int ')}\n  }\n}\n`;
    const j = await codeChunks('/r/Limiter.java', java);
    checkCover(java, j.chunks);
    expect(chunkWith(java, j.chunks, 'public boolean allow').metadata?.symbols).toContain('Limiter.allow');
    expect(chunkWith(java, j.chunks, 'public void reset').metadata?.symbols).toContain('Limiter.reset');
  });

  it("every chunk carries its file's leading comment; a definition's own doc comment is not the file's", async () => {
    const ts = `#!/usr/bin/env node\n// Reciprocal rank fusion of ranked lists;\n// a drawer rated not useful sinks.\n\nexport function fuse() {\n${body('fuse', 30)}\n}\n\nexport function rank() {\n${body('rank', 30)}\n}\n`;
    const t = await codeChunks('/r/rrf.ts', ts);
    expect(t.chunks.length).toBeGreaterThan(1);
    for (const c of t.chunks) expect(c.metadata?.file_comment).toBe('Reciprocal rank fusion of ranked lists; a drawer rated not useful sinks.');

    const doc = `/** Adds two numbers. */\nexport function add(a: number, b: number) {\n  return a + b;\n}\n`;
    expect((await codeChunks('/r/add.ts', doc)).chunks.every((c) => c.metadata?.file_comment === undefined)).toBe(true);

    const py = `"""Stock levels per warehouse."""\n\nimport os\n\n\ndef report(inventory):\n    return sorted(inventory.items)\n`;
    expect((await codeChunks('/r/stock.py', py)).chunks[0]?.metadata?.file_comment).toBe('Stock levels per warehouse.');

    // Go's package comment sits right above the package clause and is the file's.
    const go = `// Package demo serves the tide tables.\npackage demo\n\nfunc New() int {\n\treturn 1\n}\n`;
    expect((await codeChunks('/r/demo.go', go)).chunks[0]?.metadata?.file_comment).toBe('Package demo serves the tide tables.');
  });

  it('a function too long for one chunk is split at its statements, each part naming the function', async () => {
    const text = `function migrate(db) {\n${body('step', 120, '  ')}\n}\n`;
    const { chunks } = await codeChunks('/r/migrate.js', text);
    checkCover(text, chunks);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(CODE_MAX);
      expect(c.metadata?.symbols).toEqual(['migrate']);
    }
  });

  it('text the grammar cannot parse still chunks into whole lines', async () => {
    const text = Array.from({ length: 80 }, (_, i) => `)))) {{ this is not python ${i} :::: ((`).join('\n') + '\n';
    const { chunks } = await codeChunks('/r/broken.py', text);
    checkCover(text, chunks);
    expect(chunks.length).toBeGreaterThan(1);
  });

  it('other files are cut into line windows, preferring blank lines; a huge line is cut in pieces', async () => {
    const para = (n: number): string => Array.from({ length: 6 }, (_, i) => `Paragraph ${n} line ${i} says something about the design.`).join('\n');
    const text = Array.from({ length: 12 }, (_, i) => para(i)).join('\n\n') + '\n';
    const { chunks, language } = await codeChunks('/r/docs/design.md', text);
    expect(language).toBeNull();
    checkCover(text, chunks);
    for (const c of chunks.slice(0, -1)) {
      expect(c.text.length).toBeLessThanOrEqual(WINDOW_CHARS);
      expect(c.text.endsWith('\n\n')).toBe(true); // ends at a paragraph break
    }
    const long = 'x'.repeat(LONG_LINE * 2 + 10);
    const cut = lineWindowChunks(`short\n${long}\nend\n`);
    expect(cut.map((c) => c.metadata?.line_start)).toEqual([1, 2, 2, 2, 3]);
    expect(cut.map((c) => c.text).join('')).toBe(`short\n${long}\nend\n`);
  });

  it('any text, in any language, is covered in order by chunks that start on a line (property)', async () => {
    const line = fc.oneof(
      fc.constantFrom('function f(a) {', '}', 'class A {', '  m() { return 1 }', 'def g(x):', '    return x', 'func (s *S) M() {', 'impl T {', '', '// note', '\t', '😀 ünïcode'),
      fc.string({ maxLength: 120 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 120 }), fc.constantFrom('a.ts', 'a.js', 'a.py', 'a.go', 'a.rs', 'a.java', 'a.md'), async (lines, name) => {
        const text = lines.join('\n');
        const { chunks } = await codeChunks(`/r/${name}`, text);
        if (text === '') {
          expect(chunks).toEqual([]);
          return;
        }
        let at = 0;
        for (const c of chunks) {
          expect(c.start).toBe(at);
          expect(c.text).toBe(text.slice(c.start, c.end));
          expect(c.metadata?.line_start).toBe(text.slice(0, c.start).split('\n').length);
          if (c.start > 0 && text[c.start - 1] !== '\n') expect(text.slice(text.lastIndexOf('\n', c.start - 1) + 1, c.start).length).toBeGreaterThanOrEqual(LONG_LINE);
          at = c.end;
        }
        expect(at).toBe(text.length);
      }),
      { numRuns: 60 },
    );
  });
});
