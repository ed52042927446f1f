// The onnx embedder's throughput against bare `session.run` on the same batches (DESIGN.md: within
// 85%). The model is generated here (BERT-shaped, MiniLM-sized feed-forward compute), since none can be downloaded.

import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

import { createWorkerEmbedder, defaultEmbedWorkers } from '../hub/src/embed/worker-embedder.js';
import { TINY_VOCAB, tinyTokenizerJson, writeTinyBert } from '../test/helpers/tiny-bert.js';
import type { Figure, SuiteContext } from './figure.js';
import { perSecond, pick, seededRandom } from './stats.js';

const BATCHES = 16;
const BATCH = 32;
const WORDS_PER_TEXT = 40;

function int64(values: number[], dims: number[]): ort.Tensor {
  return new ort.Tensor('int64', BigInt64Array.from(values.map((v) => BigInt(v))), dims);
}

/** The feeds palace would build for one batch, made before timing so only session.run is measured. */
function feedsFor(tokenizer: Tokenizer, texts: readonly string[]): Record<string, ort.Tensor> {
  const encoded = texts.map((t) => tokenizer.encode(t, { return_token_type_ids: true }));
  const seq = Math.max(...encoded.map((e) => e.ids.length));
  const ids: number[] = [];
  const mask: number[] = [];
  const types: number[] = [];
  for (const e of encoded) {
    for (let i = 0; i < seq; i++) {
      ids.push(e.ids[i] ?? 0);
      mask.push(i < e.ids.length ? 1 : 0);
      types.push(e.token_type_ids?.[i] ?? 0);
    }
  }
  const dims = [texts.length, seq];
  return { input_ids: int64(ids, dims), attention_mask: int64(mask, dims), token_type_ids: int64(types, dims) };
}

export async function onnxFigures(ctx: SuiteContext, dir: string): Promise<Figure[]> {
  ctx.progress(`embed: generated BERT-shaped ONNX model, bare session.run vs the onnx provider, ${BATCHES} batches of ${BATCH}`);
  writeTinyBert({ dir, hidden: 384, maxPositions: 128, feedForwardBlocks: 6, pooling: 'mean' });
  const words = TINY_VOCAB.filter((w) => /^[a-z]+$/.test(w));
  const random = seededRandom(17);
  const batches = Array.from({ length: BATCHES }, () =>
    Array.from({ length: BATCH }, () => Array.from({ length: WORDS_PER_TEXT }, () => pick(random, words)).join(' ')),
  );
  const tokenizer = new Tokenizer(tinyTokenizerJson(), { do_lower_case: true, pad_token: '[PAD]' });
  const feeds = batches.map((b) => feedsFor(tokenizer, b));
  // Same options as the provider's CPU session (graph optimisation "all"), so only palace's own work differs.
  const bare = await ort.InferenceSession.create(join(dir, 'onnx', 'model.onnx'), { graphOptimizationLevel: 'all' });
  const worker = await createWorkerEmbedder({ provider: 'onnx', model: 'bench-minilm-shaped', modelDir: dir, device: 'cpu', intraOpThreads: availableParallelism() }, { workers: 1 });
  try {
    await bare.run(feeds[0] ?? {});
    await worker.embed(batches[0] ?? [], 'document');
    let bareMs = 0;
    let workerMs = 0;
    // Alternate the two so load on the machine falls on both alike.
    for (let i = 0; i < BATCHES; i++) {
      let t = performance.now();
      await bare.run(feeds[i] ?? {});
      bareMs += performance.now() - t;
      t = performance.now();
      await worker.embed(batches[i] ?? [], 'document');
      workerMs += performance.now() - t;
    }
    const q = performance.now();
    for (let i = 0; i < 20; i++) await worker.embed([`${batches[0]?.[i] ?? 'memory'} ${i}`], 'query');
    const queryMs = (performance.now() - q) / 20;
    const texts = BATCHES * BATCH;
    const bareRate = perSecond(texts, bareMs);
    return [
      {
        name: 'embed throughput, onnx provider (one worker, MiniLM-sized generated model)',
        value: perSecond(texts, workerMs),
        unit: 'texts/s',
        reference: { value: bareRate, label: 'bare onnxruntime session.run, same pre-tokenised batches, same process', measured: true },
        target: { op: '>=', value: bareRate * 0.85, note: '85% of bare' },
      },
      { name: 'query embedding, onnx provider (one worker)', value: queryMs, unit: 'ms' },
      ...(await layoutFigures(ctx, dir, batches)),
    ];
  } finally {
    await worker.close();
    await bare.release();
  }
}

/**
 * How the onnx provider should use the cores: the pool's layout (N workers, each session with
 * cores / N intra-op threads) against one worker whose session has every core; all batches at once.
 */
async function layoutFigures(ctx: SuiteContext, dir: string, batches: string[][]): Promise<Figure[]> {
  const cores = availableParallelism();
  const workers = defaultEmbedWorkers(cores);
  const threads = Math.max(1, Math.floor(cores / workers));
  ctx.progress(`embed: onnx layouts, ${workers} workers x ${threads} intra-op threads vs 1 worker x ${cores}, alternating`);
  const spec = { provider: 'onnx', model: 'bench-minilm-shaped', modelDir: dir, device: 'cpu' } as const;
  const pool = await createWorkerEmbedder({ ...spec, intraOpThreads: threads }, { workers, idleMs: 0 });
  const single = await createWorkerEmbedder({ ...spec, intraOpThreads: cores }, { workers: 1, idleMs: 0 });
  try {
    await Promise.all(batches.slice(0, workers * 2).map((b) => pool.embed(b, 'document')));
    await single.embed(batches[0] ?? [], 'document');
    let poolMs = 0;
    let singleMs = 0;
    for (let round = 0; round < 2; round++) {
      let t = performance.now();
      await Promise.all(batches.map((b) => single.embed(b, 'document')));
      singleMs += performance.now() - t;
      t = performance.now();
      await Promise.all(batches.map((b) => pool.embed(b, 'document')));
      poolMs += performance.now() - t;
    }
    const texts = 2 * batches.length * (batches[0]?.length ?? 0);
    return [
      {
        name: `embed throughput, onnx, ${workers} workers x ${threads} intra-op thread(s) (the pool's layout)`,
        value: perSecond(texts, poolMs),
        unit: 'texts/s',
        reference: { value: perSecond(texts, singleMs), label: `1 worker x ${cores} intra-op threads, same batches, all at once`, measured: true },
      },
    ];
  } finally {
    await Promise.all([pool.close(), single.close()]);
  }
}
