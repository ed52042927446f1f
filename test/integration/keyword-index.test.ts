// The keyword index of the default backend (LanceDB): full-text search matches a drawer's symbols
// and path tokens (the `keywords` column), the words of the identifiers a code drawer uses (the
// `identifiers` column) as well as its content; a table written before those columns existed gets
// them in place on open, its drawers' identifier words (and keywords) derived then, once.

import { join } from 'node:path';

import * as lancedb from '@lancedb/lancedb';
import { Schema } from 'apache-arrow';
import { afterEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { readLanceLayout } from '../../hub/src/vector/lancedb-layout.js';
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

/** Writes a `drawers` table with an older build's columns (all but `dropped`) holding these drawers. */
async function oldTable(palace: string, dropped: readonly string[], drawers: readonly StoredDrawer[], extra: Record<string, unknown> = {}): Promise<void> {
  const db = await lancedb.connect(join(palace, 'vectors'));
  const table = await db.createEmptyTable('drawers', new Schema(schemaFor(DIMS).fields.filter((f) => !dropped.includes(f.name))));
  await table.add(
    drawers.map(({ metadata, tags: _t, vector, ...r }) => ({ ...r, tags: '', useful: null, metadata_json: JSON.stringify(metadata), vector: Array.from(vector), ...extra })),
  );
  table.close();
  db.close();
}

async function nullIdentifierRows(palace: string): Promise<number> {
  const db = await lancedb.connect(join(palace, 'vectors'));
  const table = await db.openTable('drawers');
  try {
    return await table.countRows('identifiers IS NULL');
  } finally {
    table.close();
    db.close();
  }
}

const CODE = 'export function start(app) {\n  const server = http.createServer(app.callback());\n  return listDrawers(server);\n}';

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

  it('matches the words of the compound identifiers a code drawer uses, content kept verbatim', async () => {
    tmp = makeTmpDir('palace-identifiers-');
    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      await store.upsert([
        drawer('code', CODE, { symbols: ['start'], language: 'javascript' }),
        drawer('prose', 'we talked about the weather and the garden', {}),
      ]);
      // `createServer` and `listDrawers` are single tokens of the content: words alone cannot match them.
      expect((await store.fullText('create the server', {}, 5)).map((h) => h.drawer.id)).toEqual(['code']);
      expect((await store.fullText('list drawers', {}, 5)).map((h) => h.drawer.id)).toEqual(['code']);
      // The identifier itself still matches, through the content.
      expect((await store.fullText('createServer', {}, 5)).map((h) => h.drawer.id)).toEqual(['code']);
      expect((await store.scan({ ids: ['code'] }))[0]?.content).toBe(CODE);
    } finally {
      await store.close();
    }
  });

  it("matches the words of a code drawer's file comment (what its module is for)", async () => {
    tmp = makeTmpDir('palace-context-');
    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      const comment = 'Reciprocal rank fusion; a drawer rated not useful sinks without disappearing.';
      await store.upsert([
        drawer('fuse', 'for (const entry of out) entry.score *= 0.5;', { language: 'typescript', file_comment: comment }),
        drawer('other', 'return a + b;', { language: 'typescript' }),
      ]);
      expect((await store.fullText('why does it sink without disappearing', {}, 5)).map((h) => h.drawer.id)).toEqual(['fuse']);
    } finally {
      await store.close();
    }
  });

  it('a table written before the identifiers column gets it on open, its drawers derived once', async () => {
    tmp = makeTmpDir('palace-identifiers-old-');
    const code = drawer('old-code', CODE, { symbols: ['Lease.renew'], language: 'javascript' });
    await oldTable(tmp.path, ['keywords', 'identifiers', 'context'], [code, drawer('old-prose', 'the writer lease is kept by the hub', {})]);
    expect((await readLanceLayout(tmp.path))?.missing).toEqual(['keywords', 'identifiers', 'context']);

    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      // Found by identifier words and by keywords without being filed again.
      expect((await store.fullText('create the server', {}, 5)).map((h) => h.drawer.id)).toEqual(['old-code']);
      expect((await store.fullText('renew', {}, 5)).map((h) => h.drawer.id)).toEqual(['old-code']);
      expect((await store.fullText('writer lease', {}, 5)).map((h) => h.drawer.id)).toContain('old-prose');
      const [kept] = await store.scan({ ids: ['old-code'] }, { withVectors: true });
      expect(kept?.content).toBe(CODE);
      expect(kept?.metadata).toEqual(code.metadata);
      expect(Array.from(kept?.vector ?? [])).toEqual(Array.from(code.vector));
    } finally {
      await store.close();
    }
    expect((await readLanceLayout(tmp.path))?.missing).toEqual([]);
    expect(await nullIdentifierRows(tmp.path)).toBe(0);
  });

  it('a fill cut short (rows still NULL, no identifiers index) resumes on the next open', async () => {
    tmp = makeTmpDir('palace-identifiers-resume-');
    await oldTable(tmp.path, [], [drawer('left', CODE, { language: 'javascript' })], { keywords: '', identifiers: null });
    expect(await nullIdentifierRows(tmp.path)).toBe(1);
    const store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMS, log: silentLogger });
    try {
      expect((await store.fullText('list drawers', {}, 5)).map((h) => h.drawer.id)).toEqual(['left']);
    } finally {
      await store.close();
    }
    expect(await nullIdentifierRows(tmp.path)).toBe(0);
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
