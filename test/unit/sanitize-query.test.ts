import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { MAX_QUERY_CHARS, sanitizeQuery } from '../../hub/src/core/sanitize-query.js';

const SYSTEM_PROMPT = [
  'You are Claude Code, an AI coding assistant working in the palace repository.',
  'You must follow the project conventions at all times.',
  'Always run the tests before you commit.',
  'Never push to main without review.',
  'IMPORTANT: keep answers short.',
  '# Tools',
  'The palace_search tool returns drawers with wing, room and score.',
  '```',
  'palace search "query" --wing project',
  '```',
  '---',
].join('\n');

describe('sanitizeQuery', () => {
  it('passes a short one-line query through unchanged', () => {
    expect(sanitizeQuery('why did we pick LanceDB?')).toEqual({
      query: 'why did we pick LanceDB?',
      changed: false,
    });
  });

  it('trims and collapses whitespace in a short query, and says so', () => {
    expect(sanitizeQuery('  why   did we\tpick LanceDB?  ')).toEqual({
      query: 'why did we pick LanceDB?',
      changed: true,
    });
  });

  it('reduces a pasted system prompt plus question to the question', () => {
    const raw = `${SYSTEM_PROMPT}\n\nUser: What did we decide about the vector database for the embedded default?`;
    expect(sanitizeQuery(raw)).toEqual({
      query: 'What did we decide about the vector database for the embedded default?',
      changed: true,
    });
  });

  it('keeps the last question of a transcript, not an earlier one', () => {
    const raw = [
      'Human: How do I run the build?',
      'Assistant: Run npm run build. It compiles to dist/.',
      'Human: Thanks. Which port does the hub listen on by default?',
      'Assistant:',
    ].join('\n');
    expect(sanitizeQuery(raw).query).toBe('Which port does the hub listen on by default?');
  });

  it('strips a "Q:" or "Question:" prefix', () => {
    expect(sanitizeQuery('Context first.\nQ: where are the models stored?').query).toBe(
      'where are the models stored?',
    );
    expect(sanitizeQuery('Context first.\nquestion: where are the models stored?').query).toBe(
      'where are the models stored?',
    );
  });

  it('falls back to the last non-boilerplate sentence when there is no question', () => {
    const raw = `${SYSTEM_PROMPT}\nTell me about the release checklist. Focus on the signing step.`;
    expect(sanitizeQuery(raw).query).toBe('Focus on the signing step.');
  });

  it('finds the question in a long single-line paste', () => {
    const raw = `${'Background sentence about the project history and its many twists. '.repeat(8)}Where do the ONNX models live on disk? Please answer briefly.`;
    expect(raw.length).toBeGreaterThan(MAX_QUERY_CHARS);
    expect(sanitizeQuery(raw).query).toBe('Where do the ONNX models live on disk?');
  });

  it('cuts an over-long question to its last words, at a word boundary', () => {
    const words = Array.from({ length: 120 }, (_, i) => `word${i}`);
    const raw = `Preamble.\n${words.join(' ')}?`;
    const { query } = sanitizeQuery(raw);
    expect(query.length).toBeLessThanOrEqual(MAX_QUERY_CHARS);
    expect(query.endsWith('word119?')).toBe(true);
    expect(query.startsWith('word')).toBe(true);
    expect(words.map((w) => w).join(' ')).toContain(query.slice(0, -1));
  });

  it('keeps something to search for when everything looks like boilerplate', () => {
    const { query } = sanitizeQuery('You are a helpful assistant.\nAlways be concise.');
    expect(query).toBe('You are a helpful assistant. Always be concise.');
  });

  describe('properties', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 800, size: 'large' }),
      fc
        .array(
          fc.oneof(
            fc.lorem({ maxCount: 30 }),
            fc.constantFrom('You are a bot.', 'User: what now?', '', '```'),
          ),
          { maxLength: 30 },
        )
        .map((l) => l.join('\n')),
    );

    it('always returns a non-empty, trimmed, single-line query of at most MAX_QUERY_CHARS', () => {
      fc.assert(
        fc.property(
          text.filter((s) => s.trim() !== ''),
          (raw) => {
            const { query } = sanitizeQuery(raw);
            expect(query.length).toBeGreaterThan(0);
            expect(query.length).toBeLessThanOrEqual(MAX_QUERY_CHARS);
            expect(query).toBe(query.trim());
            expect(query).not.toMatch(/\n|\s\s/);
          },
        ),
        { numRuns: 300 },
      );
    });

    it('is idempotent: a sanitised query is left alone', () => {
      fc.assert(
        fc.property(
          text.filter((s) => s.trim() !== ''),
          (raw) => {
            const { query } = sanitizeQuery(raw);
            expect(sanitizeQuery(query)).toEqual({ query, changed: false });
          },
        ),
        { numRuns: 300 },
      );
    });

    it('reports changed exactly when the query differs from the input', () => {
      fc.assert(
        fc.property(text, (raw) => {
          const { query, changed } = sanitizeQuery(raw);
          expect(changed).toBe(query !== raw);
        }),
        { numRuns: 300 },
      );
    });
  });
});
