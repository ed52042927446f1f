// The embedding worker pool with the real bundled model: a request spread over several workers comes
// back whole and in order, a search takes the next free worker while every worker is busy mining,
// idle workers are ended and started again on demand, threads work as processes do, and
// PALACE_EMBED_WORKERS is validated.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../hub/src/config.js';
import type { EmbedKind } from '../../hub/src/embed/embedder.js';
import { createWorkerEmbedder, defaultEmbedWorkers, MAX_BATCH_TEXTS, type WorkerEmbedder } from '../../hub/src/embed/worker-embedder.js';
import { catchHubError } from '../helpers/errors.js';

const cosine = (a: Float32Array | undefined, b: Float32Array | undefined): number => (a ?? new Float32Array(0)).reduce((sum, x, i) => sum + x * (b?.[i] ?? 0), 0);

/** Yields to the event loop until `done()` holds (a test timeout ends a wait that never does). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('the embedding worker pool (bundled model, two workers)', () => {
  let pool: WorkerEmbedder;
  const batches: Array<{ worker: number; kind: EmbedKind; texts: number }> = [];

  beforeAll(async () => {
    pool = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 2, idleMs: 0, onBatch: (b) => batches.push(b) });
    // Work waiting while the first worker is busy starts the second; wait until it has its model.
    await pool.embed(Array.from({ length: 3 * MAX_BATCH_TEXTS }, (_, i) => `warm up ${i}`), 'document');
    await until(() => pool.workers().workers.filter((w) => w.state === 'idle').length === 2);
  });

  afterAll(async () => {
    await pool?.close();
  });

  it('spreads one long request over both workers and returns every vector in order', async () => {
    const texts = Array.from({ length: 6 * MAX_BATCH_TEXTS }, (_, i) => `chunk ${i} of the ${['parser', 'cache', 'router'][i % 3]} notes`);
    const before = batches.length;
    const all = await pool.embed(texts, 'document');
    expect(all).toHaveLength(texts.length);
    const used = new Set(batches.slice(before).map((b) => b.worker));
    expect(used.size).toBe(2);
    expect(pool.workers().workers).toHaveLength(2);
    for (const i of [0, 17, 40, 95]) {
      const [alone] = await pool.embed([texts[i] ?? ''], 'document');
      expect(cosine(all[i], alone)).toBeCloseTo(1, 5);
    }
  });

  it('hands a search to the next free worker while every worker is busy mining', async () => {
    const mining = Array.from({ length: 12 * MAX_BATCH_TEXTS }, (_, i) => `mined line ${i}: export const value${i} = ${i};`);
    const finished: string[] = [];
    const mine = pool.embed(mining, 'document').then(() => finished.push('mine'));
    await until(() => pool.workers().workers.every((w) => w.state === 'busy'));
    const dispatchedBefore = batches.length;
    const search = pool.embed(['where is value 7 defined?'], 'query').then(() => finished.push('query'));
    await search;
    // The very next batch handed out after the search arrived was the search: it waited behind at most
    // the batch its worker was on, never behind the mining request's remaining batches.
    expect(batches[dispatchedBefore]).toMatchObject({ kind: 'query', texts: 1 });
    await mine;
    expect(finished).toEqual(['query', 'mine']);
    const mineBatches = batches.filter((b) => b.kind === 'document').length;
    expect(mineBatches).toBeGreaterThan(12);
  });

  it('reports each worker with its batches and its own memory', () => {
    const status = pool.workers();
    expect(status.size).toBe(2);
    expect(status.queued_texts).toBe(0);
    for (const w of status.workers) {
      expect(w.state).toBe('idle');
      expect(w.batches).toBeGreaterThan(0);
      expect(w.memory_mb).toBeGreaterThan(10);
    }
  });
});

describe('idle workers', () => {
  it('are ended after the idle time and started again by the next call', async () => {
    const pool = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 2, idleMs: 50 });
    try {
      await pool.embed(Array.from({ length: 4 * MAX_BATCH_TEXTS }, (_, i) => `text ${i}`), 'document');
      await until(() => pool.workers().workers.length === 0);
      const released = pool.workers();
      expect(released.released).toBeGreaterThanOrEqual(1);
      expect(released.released).toBe(released.started);
      const [again] = await pool.embed(['back to work'], 'query');
      expect(again).toHaveLength(512);
      expect(pool.workers().started).toBe(released.started + 1);
    } finally {
      await pool.close();
    }
  });
});

describe('a worker process that dies', () => {
  it('fails only the requests it held, and the pool goes on with a new worker', async () => {
    const pool = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 1, idleMs: 0 });
    try {
      const pid = pool.workers().workers[0]?.pid;
      expect(pid).toBeGreaterThan(0);
      const held = pool.embed(Array.from({ length: MAX_BATCH_TEXTS }, (_, i) => `held text ${i}`), 'document');
      await until(() => pool.workers().workers[0]?.state === 'busy');
      process.kill(pid ?? 0, 'SIGKILL');
      const err = await held.then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
      expect(err?.code).toBe('memory.embed_failed');
      const [after] = await pool.embed(['still answering'], 'query');
      expect(after).toHaveLength(512);
      const status = pool.workers();
      expect(status.started).toBe(2);
      expect(status.workers[0]?.pid).not.toBe(pid);
    } finally {
      await pool.close();
    }
  });
});

describe('worker threads instead of processes', () => {
  it('embed the same vectors and report their own memory', async () => {
    const threads = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 1, idleMs: 0, isolation: 'thread' });
    const processes = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 1, idleMs: 0 });
    try {
      const texts = ['the lease is renewed every ten seconds', 'search answers before mining batches'];
      const [a, b] = await Promise.all([threads.embed(texts, 'document'), processes.embed(texts, 'document')]);
      expect(cosine(a[0], b[0])).toBeCloseTo(1, 5);
      expect(cosine(a[1], b[1])).toBeCloseTo(1, 5);
      expect(threads.workers().workers[0]?.memory_mb).toBeGreaterThan(10);
    } finally {
      await Promise.all([threads.close(), processes.close()]);
    }
  });
});

describe('PALACE_EMBED_WORKERS and PALACE_EMBED_IDLE_SECONDS', () => {
  it('default to the cores minus one, at least one (two on two cores), and 120 s', () => {
    const config = loadConfig({}, { PALACE_HOME: '/nonexistent-palace-home' });
    expect(config.embedWorkers).toBeUndefined();
    expect(config.embedIdleSeconds).toBe(120);
    expect([1, 2, 3, 4, 8].map((cores) => defaultEmbedWorkers(cores))).toEqual([1, 2, 2, 3, 7]);
  });

  it('take a whole number of workers and refuse anything else, naming the variable', () => {
    expect(loadConfig({}, { PALACE_HOME: '/nonexistent-palace-home', PALACE_EMBED_WORKERS: '3' }).embedWorkers).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'many', '65']) {
      const err = catchHubError(() => loadConfig({}, { PALACE_HOME: '/nonexistent-palace-home', PALACE_EMBED_WORKERS: bad }));
      expect(err.code).toBe('hub.config');
      expect(err.message).toContain('PALACE_EMBED_WORKERS');
    }
    const err = catchHubError(() => loadConfig({}, { PALACE_HOME: '/nonexistent-palace-home', PALACE_EMBED_IDLE_SECONDS: 'soon' }));
    expect(err.message).toContain('PALACE_EMBED_IDLE_SECONDS');
  });
});
