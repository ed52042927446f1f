// bestSnippet and hitLocation: the lines a search result shows, centred on the best match with the
// query terms marked, line numbers of the file, and the location relative to the mined root.

import { describe, expect, it } from 'vitest';

import { bestSnippet, hitLocation, SNIPPET_LINE_CHARS, SNIPPET_LINES, snippetTerms } from '../../hub/src/search/snippet.js';
import { hitText } from '../../cli/search-format.js';
import { identifierWords, searchKeywords } from '../../hub/src/core/search-keywords.js';
import type { SearchHit } from '../../hub/src/memory/drawers/memory.js';
import { embeddingInput } from '../../hub/src/memory/drawers/embedding-input.js';

const CODE = [
  '/**',
  ' * Return a request handler callback',
  ' */',
  '',
  'callback () {',
  '  const fn = this.compose(this.middleware)',
  '',
  "  if (!this.listenerCount('error')) this.on('error', this.onerror)",
  '',
  '  const handleRequest = (req, res) => {',
  '    const ctx = this.createContext(req, res)',
  '    return this.handleRequest(ctx, fn)',
  '  }',
  '',
  '  return handleRequest',
  '}',
  '',
].join('\n');

const marked = (s: { text: string; marks: Array<[number, number]> }): string[] => s.marks.map(([a, b]) => s.text.slice(a, b));

describe('bestSnippet', () => {
  it('shows the whole lines around the best match, numbered from the drawer line, terms marked', () => {
    const s = bestSnippet(CODE, 'how does koa compose the middleware stack?', 179);
    const lines = s.text.split('\n');
    expect(lines.length).toBeLessThanOrEqual(SNIPPET_LINES);
    expect(lines).toContain('  const fn = this.compose(this.middleware)');
    for (const l of lines) expect(CODE.split('\n')).toContain(l); // whole lines, verbatim
    expect(s.line_start).toBe(179 + CODE.split('\n').indexOf(lines[0]!));
    expect(marked(s)).toEqual(['compose', 'middleware']);
    // Stopwords ("how", "does", "the") are never marked.
    expect(snippetTerms('how does the app listen')).toEqual(['app', 'listen']);
  });

  it('marks camelCase parts and close word forms; without a match shows the first lines, unmarked', () => {
    const s = bestSnippet(CODE, 'creating the context of a request', null);
    expect(s.line_start).toBeNull();
    expect(marked(s)).toEqual(expect.arrayContaining(['Context', 'Request']));
    const none = bestSnippet(CODE, 'zebra', 10);
    expect(none).toEqual({ text: CODE.split('\n').slice(0, SNIPPET_LINES).join('\n'), line_start: 10, marks: [] });
  });

  it('prefers the window with the most distinct terms, and clips a huge line around its match', () => {
    const text = ['alpha one', 'filler', 'filler', 'filler', 'filler', 'filler', 'filler', 'beta alpha gamma', 'filler'].join('\n');
    const s = bestSnippet(text, 'alpha beta gamma', 1);
    expect(s.text).toContain('beta alpha gamma');
    expect(marked(s)).toEqual(['beta', 'alpha', 'gamma']);
    const long = `${'x'.repeat(1000)} needle ${'y'.repeat(1000)}`;
    const c = bestSnippet(long, 'needle', 1);
    expect(c.text.length).toBeLessThanOrEqual(SNIPPET_LINE_CHARS + 2);
    expect(marked(c)).toEqual(['needle']);
  });
});

describe('hitLocation, keywords and the embedding input', () => {
  it('uses the path relative to the mined root when recorded; null without lines', () => {
    expect(hitLocation('/abs/koa/lib/app.js', { rel_path: 'lib/app.js', line_start: 3, line_end: 9 })).toEqual({ path: 'lib/app.js', line_start: 3, line_end: 9 });
    expect(hitLocation('/abs/a.md', { line_start: 1, line_end: 2 })).toEqual({ path: '/abs/a.md', line_start: 1, line_end: 2 });
    expect(hitLocation(null, {})).toBeNull();
    expect(hitLocation('/abs/a.md', { page_start: 1 })).toBeNull();
  });

  it('keywords hold symbols and path tokens, identifiers split; code embeds as words', () => {
    const words = searchKeywords({ symbols: ['Application.createServer'], rel_path: 'lib/http_server.js' }).split(' ');
    expect(words).toEqual(expect.arrayContaining(['Application', 'createServer', 'create', 'Server', 'lib', 'http_server', 'http', 'server', 'js']));
    expect(searchKeywords({})).toBe('');
    expect(embeddingInput('prose stays as is', {})).toBe('prose stays as is');
    const input = embeddingInput('// Starts it.\nthis.listenNow(http.createServer())', { language: 'javascript', symbols: ['App.listen'] });
    expect(input).toBe('App listen\nStarts it\nthis listen Now http create Server');
    // A mined project file's path comes first, as words; a transcript's file name does not.
    const code = { mode: 'projects', language: 'typescript', rel_path: 'hub/src/core/secretScan.ts' };
    expect(embeddingInput('return 1', code)).toBe('hub src core secret Scan ts\nreturn 1');
    expect(embeddingInput('Set `X=1`.', { mode: 'projects', rel_path: 'docs/environment.md' })).toBe('docs environment md\nSet `X=1`.');
    expect(embeddingInput('> we chose Lisbon', { mode: 'convos', rel_path: 's01-2025-01-06.txt' })).toBe('> we chose Lisbon');
  });

  it('embeds a code chunk by its natural-language surface first: the leading comment of its file after the symbols', () => {
    const content = '// Caps it.\nconst n = this.size(n);\nif (n > max) return this.size(max);';
    const input = embeddingInput(content, { language: 'typescript', symbols: ['Pool.cap'], file_comment: 'Bounded worker pool for embedding jobs.' });
    expect(input).toBe('Pool cap\nBounded worker pool for embedding jobs.\nCaps it\nconst n this size n if n max return this size max');
    // Content itself is untouched (the input is derived).
    expect(content).toContain('this.size(max)');
  });

  it('identifier words: the parts of each compound identifier of code, once per use; none for prose', () => {
    const code = 'if (n > MAX_QUERY_CHARS) return listDrawers(http.createServer(), listDrawers);';
    expect(identifierWords(code, { language: 'typescript' })).toBe('MAX QUERY CHARS list Drawers create Server list Drawers');
    expect(identifierWords('plain words only; no compounds here', { language: 'python' })).toBe('');
    expect(identifierWords(code, {})).toBe('');
  });
});

describe('palace search output', () => {
  const hit = (query: string): SearchHit => ({
    drawer_id: 'drawer_x',
    wing: 'koa',
    room: 'lib',
    tags: [],
    content: CODE,
    source_file: '/abs/koa/lib/application.js',
    filed_at: '2026-01-01T00:00:00Z',
    created_by: 'palace-mine',
    added_by: 'palace-mine',
    useful: null,
    chunk_index: 3,
    parent_id: null,
    score: 0.0321,
    score_components: { vector: 0.5, text: 0.2 },
    similarity: 0.5,
    matched: ['vector', 'text'],
    location: { path: 'lib/application.js', line_start: 179, line_end: 194 },
    snippet: bestSnippet(CODE, query, 179),
    mined: null,
    stale: false,
  });

  it('heads a hit with path:lines and score, numbers the snippet lines, highlights only on request', () => {
    const plain = hitText(hit('compose middleware'), 0, { full: false, color: false });
    expect(plain.split('\n')[0]).toBe('[1] lib/application.js:179-194  score 0.032');
    expect(plain).toContain('184 │   const fn = this.compose(this.middleware)');
    expect(plain).not.toContain('\u001b[');
    const color = hitText(hit('compose middleware'), 0, { full: false, color: true });
    expect(color).toContain('this.\u001b[1;33mcompose\u001b[0m(this.\u001b[1;33mmiddleware\u001b[0m)');
    const full = hitText(hit('compose middleware'), 0, { full: true, color: false });
    expect(full).toContain('179 │ /**');
    expect(full).toContain('194 │ }');
  });
});
