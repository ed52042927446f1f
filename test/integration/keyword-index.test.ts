// The keyword index of the default backend (LanceDB): full-text search matches a drawer's symbols
// and path tokens (the `keywords` column) as well as its content, and a table written before that
// column existed gets it in place on open, its drawers still found by content.

import { join } from 'node:path';

import * as lancedb from '@lancedb/lancedb';
import { Schema } from 'apache-arrow';
import { afterEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { LanceDbVectorStore, schemaFor } from '../../hub/src/vector/lancedb-vector-store.js';
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

describe('keyword index (LanceDB)', () => {
  let tmp: TmpDir | undefined;
  afterEach(() => tmp?.cleanup());

  it('matches symbols (camelCase split) and path tokens that the content does not hold', async () => {
    tmp = makeTmpDir('palace-keywords-');
    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      await store.upsert([
        drawer('a', 'return build(port)', { symbols: ['HttpServer.startListening'], rel_path: 'lib/network/http-server.ts', language: 'typescript' }),
        drawer('b', 'an unrelated note about listening to music', {}),
      ]);
      expect((await store.fullText('start listening', {}, 5)).map((h) => h.drawer.id)).toContain('a');
      expect((await store.fullText('network', {}, 5)).map((h) => h.drawer.id)).toEqual(['a']);
      expect((await store.fullText('music', {}, 5)).map((h) => h.drawer.id)).toEqual(['b']);
      // Content stays verbatim: the keywords are not part of it.
      expect((await store.scan({ ids: ['a'] }))[0]?.content).toBe('return build(port)');
    } finally {
      await store.close();
    }
  });

  it('adds the keywords column to a table written before it existed', async () => {
    tmp = makeTmpDir('palace-keywords-old-');
    const dir = join(tmp.path, 'vectors');
    const old = new Schema(schemaFor(DIMS).fields.filter((f) => f.name !== 'keywords'));
    const db = await lancedb.connect(dir);
    const table = await db.createEmptyTable('drawers', old);
    const row = drawer('old', 'the writer lease is kept by the hub', { symbols: ['Lease.renew'] });
    await table.add([{ ...row, tags: '', useful: null, metadata_json: JSON.stringify(row.metadata), vector: Array.from(row.vector) }].map(({ metadata: _m, ...r }) => r));
    table.close();
    db.close();

    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      expect((await store.fullText('writer lease', {}, 5)).map((h) => h.drawer.id)).toEqual(['old']);
      // Re-filing the drawer (what re-mining does) fills its keywords.
      await store.upsert([row]);
      expect((await store.fullText('renew', {}, 5)).map((h) => h.drawer.id)).toEqual(['old']);
    } finally {
      await store.close();
    }
  });
});
