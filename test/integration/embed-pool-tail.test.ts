// The end of a burst is shared among the workers: with the real bundled model in two worker
// processes (both loaded), the last texts of a request are cut into even batches, one per worker,
// instead of a full batch on one worker while the other idles (the end of every mine); a single
// worker, or work enough for a full batch each, still gets full batches.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { EmbedKind } from '../../hub/src/embed/embedder.js';
import { batchLimit, createWorkerEmbedder, MAX_BATCH_TEXTS, type WorkerEmbedder } from '../../hub/src/embed/worker-embedder.js';

const cosine = (a: Float32Array | undefined, b: Float32Array | undefined): number => (a ?? new Float32Array(0)).reduce((sum, x, i) => sum + x * (b?.[i] ?? 0), 0);

describe('batchLimit: the size of the next batch', () => {
  it('is full while every ready worker can have a full batch, else a share of the rest (never cut below 4)', () => {
    expect(batchLimit(100, 2)).toBe(MAX_BATCH_TEXTS);
    expect(batchLimit(2 * MAX_BATCH_TEXTS, 2)).toBe(MAX_BATCH_TEXTS);
    expect(batchLimit(20, 2)).toBe(10);
    expect(batchLimit(10, 2)).toBe(5);
    expect(batchLimit(9, 2)).toBe(5);
    expect(batchLimit(7, 2)).toBe(7);
    expect(batchLimit(3, 2)).toBe(3);
    expect(batchLimit(20, 3)).toBe(7);
    expect(batchLimit(20, 1)).toBe(MAX_BATCH_TEXTS);
    expect(batchLimit(20, 0)).toBe(MAX_BATCH_TEXTS);
  });
});

describe('the end of a burst on a pool of two loaded workers', { timeout: 120_000 }, () => {
  let pool: WorkerEmbedder;
  const batches: Array<{ worker: number; kind: EmbedKind; texts: number }> = [];

  beforeAll(async () => {
    pool = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 2, idleMs: 0, onBatch: (b) => batches.push(b) });
    await pool.warm();
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('shares 20 texts between both workers (10, then 5 and 5) and returns every vector in order', async () => {
    expect(pool.workers().workers.map((w) => w.state)).toEqual(['idle', 'idle']);
    const texts = Array.from({ length: 20 }, (_, i) => `chunk ${i} of the ${['parser', 'cache', 'router'][i % 3]} notes`);
    const vectors = await pool.embed(texts, 'document');
    expect(batches.map((b) => b.texts)).toEqual([10, 5, 5]);
    expect(new Set(batches.map((b) => b.worker)).size).toBe(2);
    expect(vectors).toHaveLength(20);
    for (const i of [0, 13, 19]) {
      const [alone] = await pool.embed([texts[i] ?? ''], 'document');
      expect(cosine(vectors[i], alone)).toBeCloseTo(1, 5);
    }
  });

  it('keeps full batches while there is a full one for each worker, then shares the rest', async () => {
    batches.length = 0;
    await pool.embed(Array.from({ length: 2 * MAX_BATCH_TEXTS + 12 }, (_, i) => `line ${i}`), 'document');
    const sizes = batches.map((b) => b.texts);
    // 44 waiting: a full batch, then 28 < 2 full ones: 14, then 14 left: 7 and 7 (the old pool: 16, 16, 12).
    expect(sizes).toEqual([MAX_BATCH_TEXTS, 14, 7, 7]);
  });
});
