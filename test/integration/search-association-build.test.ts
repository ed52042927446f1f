// Search latency (issue 32): the term associations of the mined code are built off the request path
// and never hold the event loop for the whole build (search/association-index.ts), and they are the
// same index TermAssociations.build makes of the same chunks; hybrid search's by-id BM25 reads scores
// only (VectorStore.fullTextScores), the same scores as fullText. A real LanceDB palace.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { normalize } from '../../hub/src/embed/embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { sourceDrawerId } from '../../hub/src/memory/drawers/memory.js';
import { AssociationIndex } from '../../hub/src/search/association-index.js';
import { TermAssociations } from '../../hub/src/search/expand.js';
import type { MinedFile } from '../../hub/src/search/path-scan.js';
import { analyzeQuery } from '../../hub/src/search/query.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import { fullTextScores, type DrawerFilter, type ScanOptions, type StoredDrawer } from '../../hub/src/vector/vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { countLoopTurns } from '../helpers/loop-turns.js';

const DIM = 4;
const FILES = 200;
const CHUNKS = 3;
const TOPICS: Array<[string, string]> = [
  ['Looks for a credential in the text', 'findSecret'],
  ['Formats the output line', 'formatRow'],
  ['Opens the socket for a client', 'openSocket'],
  ['Retries the request after a timeout', 'retryLater'],
];

function rows(): { drawers: StoredDrawer[]; files: MinedFile[] } {
  const drawers: StoredDrawer[] = [];
  const files: MinedFile[] = [];
  for (let f = 0; f < FILES; f++) {
    const source = `/p/src/f${f}.ts`;
    files.push({ source_file: source, rel_path: `src/f${f}.ts`, drawers: CHUNKS });
    for (let c = 0; c < CHUNKS; c++) {
      const [comment, name] = TOPICS[(f + c) % TOPICS.length] ?? ['', ''];
      const v = new Float32Array(DIM).map((_, d) => Math.sin(f * 7 + c * 3 + d + 1));
      drawers.push({
        id: sourceDrawerId(source, c),
        wing: 'p',
        room: 'code',
        tags: [],
        content: `// ${comment}.\nconst value${f}x${c} = ${name}(input${c}, options${f % 5});`,
        source_file: source,
        chunk_index: c,
        parent_id: null,
        filed_at: new Date(Date.UTC(2026, 0, 1, 0, 0, f)).toISOString(),
        added_by: 'miner',
        useful: null,
        metadata: { language: 'typescript', mode: 'projects', rel_path: `src/f${f}.ts` },
        embedder: `test/${DIM}`,
        vector: normalize(v),
      });
    }
  }
  // Prose (no language): read by nobody's index.
  drawers.push({ ...(drawers[0] as StoredDrawer), id: 'drawer_prose', source_file: null, content: 'credential credential secret', metadata: {} });
  return { drawers, files };
}

describe('search off the request path', () => {
  let tmp: TmpDir;
  let store: LanceDbVectorStore;
  const { drawers, files } = rows();

  beforeAll(async () => {
    tmp = makeTmpDir('palace-assoc-build-');
    store = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIM, log: silentLogger });
    await store.upsert(drawers);
  });
  afterAll(async () => {
    await store.close();
    tmp.cleanup();
  });

  it('builds the same associations as TermAssociations.build over the mined chunks, reading no vectors', async () => {
    const scans: ScanOptions[] = [];
    const reader = { scan: (filter: DrawerFilter, options?: ScanOptions) => (scans.push(options ?? {}), store.scan(filter, options)) };
    const built = await new AssociationIndex(reader, () => files, sourceDrawerId).current();
    const reference = TermAssociations.build(drawers);
    expect(built.units).toBe(FILES * CHUNKS);
    expect(built.units).toBe(reference.units);
    for (const q of ['where is a credential looked for', 'how is the output line formatted', 'what happens after a timeout', 'who opens the client socket'])
      expect(built.expand(analyzeQuery(q).stems)).toEqual(reference.expand(analyzeQuery(q).stems));
    // The bridge itself: "credential" brings a word of findSecret (find and secret tie; the first by name).
    expect(built.expand(analyzeQuery('credential').stems).map((e) => e.word)).toEqual(['find']);
    expect(scans.length).toBeGreaterThan(0);
    for (const o of scans) {
      expect(o.withVectors ?? false).toBe(false);
      expect(o.columns).toBeDefined();
    }
  });

  it('hands the event loop back while it indexes, not only between store reads', async () => {
    // Turns of the event loop counted from the moment the last scan's rows are handed over: a build
    // that indexes them in one synchronous run lets none through.
    const loop = countLoopTurns();
    const reader = {
      scan: async (filter: DrawerFilter, options?: ScanOptions) => {
        const out = await store.scan(filter, options);
        loop.reset();
        return out;
      },
    };
    const built = await new AssociationIndex(reader, () => files, sourceDrawerId, 0).current();
    loop.stop();
    expect(built.units).toBe(FILES * CHUNKS);
    expect(loop.count).toBeGreaterThanOrEqual(FILES * CHUNKS - 1);
  });

  it('reads the by-id BM25 as scores only, equal to fullText', async () => {
    const ids = drawers.slice(0, 90).map((d) => d.id);
    for (const query of ['credential secret', 'output line formatRow', 'socket client timeout']) {
      const full = (await store.fullText(query, { ids }, ids.length)).map((h) => ({ id: h.drawer.id, score: h.score }));
      expect(full.length).toBeGreaterThan(0);
      expect(await store.fullTextScores(query, { ids }, ids.length)).toEqual(full);
      // A store without the method: the helper falls back to fullText.
      expect(await fullTextScores({ fullText: (q, f, l, o) => store.fullText(q, f, l, o) }, query, { ids }, ids.length)).toEqual(full);
    }
  });
});
