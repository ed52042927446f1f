// Chunk enrichment and query expansion in the default backend (LanceDB, issue 32): the signatures
// and doc comments the miner records for a code chunk are a full-text field of their own (`doc`),
// content stays verbatim; expansion words match as a second, down-weighted clause.

import { afterEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import type { StoredDrawer } from '../../hub/src/vector/vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const DIMS = 4;

function drawer(id: string, content: string, metadata: Record<string, unknown>): StoredDrawer {
  return {
    id,
    wing: 'w',
    room: 'r',
    tags: [],
    content,
    source_file: null,
    chunk_index: 0,
    parent_id: null,
    filed_at: '2026-01-01T00:00:00Z',
    added_by: 'test',
    useful: null,
    metadata,
    embedder: 'test/4',
    vector: Float32Array.from([1, 0, 0, 0]),
  };
}

describe('search enrichment (LanceDB)', () => {
  let tmp: TmpDir | undefined;
  afterEach(() => tmp?.cleanup());

  it("finds a chunk by its definition's doc comment and signature, which its content does not hold", async () => {
    tmp = makeTmpDir('palace-enrich-');
    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      // The middle of a long method: its doc comment and signature are in the chunk before.
      const middle = '    total += step(input, 7);\n    total += step(input, 8);';
      await store.upsert([
        drawer('inner', middle, { language: 'javascript', symbols: ['Meter.accumulate'], signatures: ['accumulate(readings)'], doc: 'Adds up every reading, smallest first.' }),
        drawer('other', 'function render(view) {\n  return view.html;\n}', { language: 'javascript', symbols: ['render'] }),
      ]);
      expect((await store.fullText('smallest reading first', {}, 5)).map((h) => h.drawer.id)).toEqual(['inner']);
      expect((await store.fullText('readings', {}, 5)).map((h) => h.drawer.id)).toEqual(['inner']);
      expect((await store.scan({ ids: ['inner'] }))[0]?.content).toBe(middle);
    } finally {
      await store.close();
    }
  });

  it('matches expansion words below the query words', async () => {
    tmp = makeTmpDir('palace-expand-');
    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      await store.upsert([
        drawer('secret', 'const hit = findSecret(text);', { language: 'typescript' }),
        drawer('credential', 'credential checks happen elsewhere', {}),
        drawer('unrelated', 'the weather is fine', {}),
      ]);
      // Without expansion the code chunk shares no word with the question.
      expect((await store.fullText('credential detector', {}, 5)).map((h) => h.drawer.id)).toEqual(['credential']);
      const expanded = await store.fullText('credential detector', {}, 5, { expansion: { words: ['secret'], weight: 0.5 } });
      // Both found; the drawer with the query's own word first.
      expect(expanded.map((h) => h.drawer.id)).toEqual(['credential', 'secret']);
      // Words that are not plain words are dropped, not passed to the query parser.
      const odd = await store.fullText('credential', {}, 5, { expansion: { words: ['se(cret', 'a b'], weight: 0.5 } });
      expect(odd.map((h) => h.drawer.id)).toEqual(['credential']);
    } finally {
      await store.close();
    }
  });
});
