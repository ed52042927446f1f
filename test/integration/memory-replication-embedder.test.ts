// Memory replication between hubs with different embedders (issue 34): hub A embeds with the bundled
// model (512-d), hub B with a small ONNX sentence-transformers export generated here (32-d, real
// onnxruntime). B cannot use A's vectors, so it re-embeds the replicated drawers on arrival through
// its embedding pool, and a vector-only search on B finds them by their words' meaning in B's space.
// Between hubs with the same embedder, vectors are shipped and nothing is re-embedded.

import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { writeTinyBert } from '../helpers/tiny-bert.js';
import { palaceStatus } from '../../hub/src/status.js';
import { makeHubDirs, startTestHub, waitUntil } from '../helpers/hub.js';
import { round, share, startReplNode, stopReplNodes, type ReplNode } from '../helpers/memory-replication.js';

const nodes: ReplNode[] = [];
const probe = makeHubDirs('palace-memrep-model-');
afterAll(async () => {
  await stopReplNodes(nodes);
  probe.cleanup();
});

const TEXTS = [
  'the quick brown fox jumps over the lazy dog',
  'coffee and tea with milk and sugar in the morning',
  'a river runs past the mountain city and the old road',
];

describe('replication across embedders', () => {
  let B_ENV: Record<string, string>;
  let a: ReplNode;
  let b: ReplNode;
  let c: ReplNode;
  beforeAll(async () => {
    // The tiny model lives in B's PALACE_HOME/models; makeHubDirs gives each node its own home.
    writeTinyBert({ dir: join(probe.palaceHome, 'models', 'tiny-bert'), hidden: 32, pooling: 'mean' });
    a = await startReplNode('a');
    c = await startReplNode('c');
    B_ENV = { PALACE_HOME: probe.palaceHome, PALACE_EMBEDDING_PROVIDER: 'onnx', PALACE_EMBEDDING_MODEL: 'tiny-bert' };
    b = await startReplNode('b', B_ENV);
    nodes.push(a, b, c);
    share(a, [
      { peer: b, wings: ['team'] },
      { peer: c, wings: ['team'] },
    ]);
    share(b, [{ peer: a, wings: ['team'] }]);
    share(c, [{ peer: a, wings: ['team'] }]);
  }, 90_000);

  it('a hub with another embedder stores on arrival, re-embeds in the background (surviving a restart) and then finds the drawer by meaning', async () => {
    expect(b.memory.embedderInfo().dimensions).toBe(32);
    expect(a.memory.embedderInfo().dimensions).not.toBe(32);
    const ids: string[] = [];
    for (const content of TEXTS) ids.push((await a.memory.addDrawer({ wing: 'team', room: 'words', content })).drawer_id);
    // The background re-embedding is held, so the round is seen completing before any embedding.
    await b.memory.replicator?.pauseReembedding();
    const r = await round(b);
    expect(r.results[0]).toMatchObject({ ok: true, memory: { applied: 3 } });
    // Stored at once: found by its words, not yet by meaning; the status shows the wait.
    const text = await b.memory.search({ query: 'quick brown fox', mode: 'text', limit: 3 });
    expect(text.results.map((h) => h.drawer_id)).toContain(ids[0]);
    expect((await b.memory.search({ query: 'brown fox and lazy dog', mode: 'vector', limit: 3 })).results).toEqual([]);
    expect((await palaceStatus(b.hub.services)).replication).toMatchObject({ reembedding: { reembedded: 0, waiting: 3, total: 3 } });

    // A restart finds the waiting rows again and re-embeds them in the background.
    await b.hub.close();
    b.hub = await startTestHub(b.dirs, { env: { PALACE_SYNC_INTERVAL: '0', ...B_ENV } });
    expect((await palaceStatus(b.hub.services)).replication).toMatchObject({ reembedding: { waiting: 3 } });
    b.memory = await b.hub.services.memory.get();
    await waitUntil(async () => b.memory.replicator?.progress.waiting === 0 && b.memory.replicator.progress.reembedded === 3, 'the background re-embedding', 60_000);
    const hit = await b.memory.search({ query: 'brown fox and lazy dog', mode: 'vector', limit: 1 });
    expect(hit.results[0]?.drawer_id).toBe(ids[0]);
    const hit2 = await b.memory.search({ query: 'milk in the coffee', mode: 'vector', limit: 1 });
    expect(hit2.results[0]?.drawer_id).toBe(ids[1]);
    const census = await b.memory.embedderCensus();
    expect(Object.keys(census.by_embedder)).toEqual([census.current]);
    expect((await palaceStatus(b.hub.services)).replication).toMatchObject({ reembedding: { reembedded: 3, waiting: 0, total: 3 } });
  }, 120_000);

  it('a hub with the same embedder takes the shipped vectors and re-embeds nothing', async () => {
    const r = await round(c);
    expect(r.results[0]).toMatchObject({ ok: true, memory: { applied: 3 } });
    expect(c.memory.replicator?.progress.reembedded).toBe(0);
    const hit = await c.memory.search({ query: 'brown fox and lazy dog', mode: 'vector', limit: 1 });
    expect(hit.results[0]?.content).toBe(TEXTS[0]);
  }, 60_000);
});
