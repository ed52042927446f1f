// Search quality through a networked backend equals the embedded one: the same drawers and vectors
// in LanceDB and in pgvector (PGlite over the wire) give the same nearest neighbours in the same
// order with the same distances, under filters too, and full text finds the same drawers.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import { PgVectorStore } from '../../hub/src/vector/pgvector-vector-store.js';
import type { DrawerFilter, StoredDrawer } from '../../hub/src/vector/vector-store.js';
import { freshNamespace, startPgliteServer, type PgliteServer } from '../helpers/pglite-server.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { storedDrawer } from '../contract/vector-store.contract.js';

const DIMENSIONS = 16;
const WORDS = ['lancedb', 'postgres', 'vector', 'search', 'palace', 'drawer', 'agent', 'hub', 'sync', 'cypher', 'graph', 'token'];

/** A deterministic pseudo-random generator (mulberry32), so the data is the same on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unitVector(next: () => number): Float32Array {
  const v = Float32Array.from({ length: DIMENSIONS }, () => next() * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe('search parity: pgvector (PGlite) against LanceDB on the same drawers', () => {
  let pg: PgliteServer;
  let dir: TmpDir;
  let lance: LanceDbVectorStore;
  let pgv: PgVectorStore;
  const next = rng(20260201);
  const drawers: StoredDrawer[] = Array.from({ length: 60 }, (_, i) =>
    storedDrawer({
      wing: i % 3 === 0 ? 'alpha' : 'beta',
      room: `room${i % 4}`,
      tags: [WORDS[i % WORDS.length] ?? 'x'],
      content: Array.from({ length: 8 }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' '),
      embedder: `parity/${DIMENSIONS}`,
      vector: unitVector(next),
    }),
  );

  beforeAll(async () => {
    pg = await startPgliteServer();
    dir = makeTmpDir('palace-parity-');
    lance = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions: DIMENSIONS, log: silentLogger });
    pgv = await PgVectorStore.open({
      settings: { pgvectorDsn: pg.dsn, pgvectorDatabase: undefined, timeoutSeconds: 10, namespace: freshNamespace('par') },
      dimensions: DIMENSIONS,
      maxConnections: 1,
    });
    await lance.upsert(drawers);
    await pgv.upsert(drawers);
  }, 60_000);

  afterAll(async () => {
    await lance.close();
    await pgv.dropAll();
    await pgv.close();
    await pg.stop();
    dir.cleanup();
  });

  it.each<[string, DrawerFilter]>([
    ['no filter', {}],
    ['a wing', { wing: 'alpha' }],
    ['a room and tags', { room: 'room1', tags: ['palace', 'hub', 'sync'] }],
  ])('returns the same nearest drawers in the same order (%s)', async (_what, filter) => {
    for (let q = 0; q < 12; q++) {
      const query = unitVector(next);
      const a = await lance.search(query, filter, 8);
      const b = await pgv.search(query, filter, 8);
      expect(b.map((h) => h.drawer.id)).toEqual(a.map((h) => h.drawer.id));
      b.forEach((h, i) => expect(h.distance).toBeCloseTo(a[i]?.distance ?? Number.NaN, 4));
    }
  });

  it('finds the same drawers by full text (BM25 and its documented ts_rank fallback)', async () => {
    for (const word of ['cypher', 'graph token', 'LanceDB']) {
      const a = await lance.fullText(word, {}, 100);
      const b = await pgv.fullText(word, {}, 100);
      expect(b.map((h) => h.drawer.id).sort()).toEqual(a.map((h) => h.drawer.id).sort());
    }
  });
});
