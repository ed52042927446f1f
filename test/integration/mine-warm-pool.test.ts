// A mine warms the embedding pool before its first batch: with the real bundled model in real worker
// processes, every worker of the pool has been started by the time the first batch is handed to one
// (their models load while the files are read and chunked), a second mine reuses them, warm() never
// starts more workers than the pool holds, and nothing is started when there is nothing to embed.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createWorkerEmbedder, type WorkerEmbedder } from '../../hub/src/embed/worker-embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { Memory } from '../../hub/src/memory/drawers/memory.js';
import { mineSource } from '../../hub/src/mine/miner.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';

const SLOW = { timeout: 120_000 };
const direct = <T>(fn: () => Promise<T>): Promise<T> => fn();

describe('mining warms the embedding pool before its first batch (bundled model, pool of two processes)', SLOW, () => {
  let base: string;
  let root: string;
  let palacePath: string;
  let pool: WorkerEmbedder;
  let memory: Memory;
  /** The pool's state each time a batch is handed to a worker. */
  const atBatch: Array<{ started: number; workers: number }> = [];

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'palace-mine-warm-'));
    root = join(base, 'project');
    palacePath = join(base, 'palace');
    for (let i = 0; i < 12; i++) {
      mkdirSync(join(root, `pkg${i % 3}`), { recursive: true });
      writeFileSync(join(root, `pkg${i % 3}`, `mod${i}.ts`), `// module ${i}\nexport function handler${i}(input: string): string {\n  return input.trim() + '${i}';\n}\n`);
    }
    pool = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 2, idleMs: 0, onBatch: () => atBatch.push({ started: pool.workers().started, workers: pool.workers().workers.length }) });
    const store = await LanceDbVectorStore.open({ palacePath, dimensions: pool.info().dimensions, log: silentLogger });
    memory = new Memory({ store, embedder: pool });
  });

  afterAll(async () => {
    await memory?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('opening the embedder starts one worker only (the pool costs nothing more until something is mined)', () => {
    expect(pool.workers()).toMatchObject({ size: 2, started: 1 });
    expect(pool.workers().workers).toHaveLength(1);
  });

  it('a dry run starts no worker and never opens the memory', async () => {
    let opened = 0;
    const report = await mineSource(async () => (opened++, memory), palacePath, { path: root, mode: 'projects', dryRun: true }, { step: direct });
    expect(report.files_mined).toBe(12);
    expect(opened).toBe(0);
    expect(pool.workers().started).toBe(1);
  });

  it('every worker of the pool is started before the first batch is handed over', async () => {
    const report = await mineSource(async () => memory, palacePath, { path: root, mode: 'projects' }, { step: direct });
    expect(report.files_mined).toBe(12);
    expect(report.drawers_filed).toBeGreaterThanOrEqual(12);
    // Without warming, the second worker starts only once the first batch waits behind the first one.
    expect(atBatch[0]).toEqual({ started: 2, workers: 2 });
    expect(pool.workers().started).toBe(2);
  });

  it('a second mine reuses the warm pool, and warm() never starts more workers than the pool holds', async () => {
    await pool.warm();
    expect(pool.workers().workers.map((w) => w.state)).toEqual(['idle', 'idle']);
    const before = atBatch.length;
    const again = await mineSource(async () => memory, palacePath, { path: root, mode: 'projects', force: true }, { step: direct });
    expect(again.files_mined).toBe(12);
    expect(atBatch.length).toBeGreaterThan(before);
    await Promise.all([pool.warm(), pool.warm(), pool.warm()]);
    expect(pool.workers().started).toBe(2);
    expect(pool.workers().workers).toHaveLength(2);
  });

  it('a re-mine of the unchanged project opens nothing and starts nothing', async () => {
    let opened = 0;
    const report = await mineSource(async () => (opened++, memory), palacePath, { path: root, mode: 'projects' }, { step: direct });
    expect(report.files_unchanged).toBe(12);
    expect(opened).toBe(0);
    expect(pool.workers().started).toBe(2);
  });
});
