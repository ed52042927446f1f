// A mine keeps the embedding pool fed: the next batch of files is chunked and handed to the pool
// before the batch before it is written, so no worker idles while the hub thread chunks or writes.
// Real bundled model in a real pool of two worker processes, real LanceDB, real manifest.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createWorkerEmbedder, type WorkerEmbedder } from '../../hub/src/embed/worker-embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { Memory } from '../../hub/src/memory/drawers/memory.js';
import { readManifest } from '../../hub/src/mine/manifest.js';
import { mineSource, type MineProgress } from '../../hub/src/mine/miner.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';

const SLOW = { timeout: 120_000 };
/** Three batches of files (the miner writes 32 files per step). */
const FILES = 70;

describe('mining hands the next batch to the embedding pool before writing the current one', SLOW, () => {
  let base: string;
  let root: string;
  let palacePath: string;
  let pool: WorkerEmbedder;
  let store: LanceDbVectorStore;
  let memory: Memory;
  /** Texts handed to the pool so far (every embed call of the mine, counted as it is made). */
  let submitted = 0;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'palace-mine-pipeline-'));
    root = join(base, 'project');
    palacePath = join(base, 'palace');
    for (let i = 0; i < FILES; i++) {
      mkdirSync(join(root, `pkg${i % 5}`), { recursive: true });
      writeFileSync(join(root, `pkg${i % 5}`, `mod${i}.ts`), `// module ${i}\nexport function handler${i}(input: string): string {\n  return input.trim() + '${i}';\n}\n`);
    }
    pool = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 2, idleMs: 0 });
    store = await LanceDbVectorStore.open({ palacePath, dimensions: pool.info().dimensions, log: silentLogger });
    // The pool as Memory sees it, counting the texts of each embed call when it is made.
    const counting = new Proxy(pool, {
      get(target, prop) {
        if (prop === 'embed')
          return (texts: string[], ...rest: unknown[]) => {
            submitted += texts.length;
            return (target.embed as (t: string[], ...r: unknown[]) => unknown)(texts, ...rest);
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    memory = new Memory({ store, embedder: counting });
  });

  afterAll(async () => {
    await memory?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('every write step but the last finds the next batch already handed to the pool; batches are written in order', async () => {
    /** At each write step: texts handed to the pool when it starts, and drawers stored when it ends. */
    const atWrite: Array<{ submitted: number; stored: number }> = [];
    const progress: MineProgress[] = [];
    const report = await mineSource(
      async () => memory,
      palacePath,
      { path: root, mode: 'projects' },
      {
        step: async (fn) => {
          const before = submitted;
          const result = await fn();
          atWrite.push({ submitted: before, stored: await store.count() });
          return result;
        },
        progress: (p) => progress.push(p),
      },
    );
    expect(report).toMatchObject({ files_seen: FILES, files_mined: FILES, errors: [] });
    expect(report.drawers_filed).toBeGreaterThanOrEqual(FILES);
    expect(atWrite).toHaveLength(3);
    // Before: each batch was embedded, then written, and only then was the next one chunked and handed
    // over: a step started with exactly the texts it wrote handed to the pool. Now the next batch's texts
    // were handed over before the step began (whether or not the pool has finished them yet).
    for (const at of atWrite.slice(0, -1)) expect(at.submitted).toBeGreaterThan(at.stored);
    // The last step has nothing after it.
    expect(atWrite.at(-1)?.submitted).toBe(atWrite.at(-1)?.stored);
    // Progress still moves forward batch by batch, and every file is in the manifest.
    expect(progress.map((p) => p.files_done)).toEqual([0, 32, 64, FILES]);
    const manifest = readManifest(palacePath);
    expect(Object.keys(manifest).filter((f) => f.startsWith(root))).toHaveLength(FILES);
    const search = await memory.search({ query: 'handler69 input trim', limit: 3 });
    expect(search.results.length).toBeGreaterThan(0);
  });

  it('a failing write stops the mine with its error; the next batch, failing meanwhile in the pool, is no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let steps = 0;
      await expect(
        mineSource(
          async () => memory,
          palacePath,
          { path: root, mode: 'projects', force: true },
          {
            step: async () => {
              steps++;
              // The next batch is in the pool now: closing it fails that batch's embedding.
              await pool.close();
              throw new Error('disk full (test)');
            },
          },
        ),
      ).rejects.toThrow('disk full (test)');
      expect(steps).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
