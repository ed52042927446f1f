// The onnx provider against a BERT-shaped model generated at test time, run by real onnxruntime:
// shapes, normalisation, pooling, padding, batching, truncation, declared inputs, device fallback, missing files.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Embedder } from '../../hub/src/embed/embedder.js';
import { createOnnxEmbedder } from '../../hub/src/embed/onnx-embedder.js';
import type { Logger } from '../../hub/src/log.js';
import { makeLogger, silentLogger } from '../../hub/src/log.js';
import { rejectedHubError } from '../helpers/errors.js';
import type { TinyBert, TinyBertOptions } from '../helpers/tiny-bert.js';
import { tinyTokenizerJson, writeTinyBert } from '../helpers/tiny-bert.js';
import type { TmpDir } from '../helpers/tmp-dir.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

let tmp: TmpDir;
const open: Embedder[] = [];

beforeAll(() => {
  tmp = makeTmpDir('palace-onnx-');
});
afterAll(async () => {
  for (const e of open) await e.close();
  tmp.cleanup();
});

function model(name: string, options: Omit<TinyBertOptions, 'dir'> = {}): TinyBert {
  return writeTinyBert({ dir: join(tmp.path, name), ...options });
}

async function embedderFor(
  tiny: TinyBert,
  options: { model?: string; device?: string; batchSize?: number; logger?: Logger } = {},
): Promise<Embedder> {
  const embedder = await createOnnxEmbedder(
    {
      provider: 'onnx',
      model: options.model ?? 'tiny-bert',
      modelDir: tiny.dir,
      device: options.device ?? 'cpu',
    },
    {
      logger: options.logger ?? silentLogger,
      ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    },
  );
  open.push(embedder);
  return embedder;
}

function norm(v: Float32Array): number {
  return Math.sqrt(v.reduce((s, x) => s + x * x, 0));
}

function maxDiff(a: Float32Array | undefined, b: Float32Array | undefined): number {
  if (!a || !b || a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return m;
}

function words(n: number, offset = 0): string {
  const vocab = [
    'memory',
    'palace',
    'drawer',
    'river',
    'garden',
    'quick',
    'brown',
    'fox',
    'coffee',
    'winter',
    'blue',
    'seven',
  ];
  return Array.from({ length: n }, (_, i) => vocab[(i + offset) % vocab.length]).join(' ');
}

/** Runs the bare session on one text and returns last_hidden_state rows of its tokens: an independent reference. */
async function bareTokenStates(
  tiny: TinyBert,
  onnxFile: string,
  text: string,
  withTypes: boolean,
): Promise<Float32Array[]> {
  const tokenizer = new Tokenizer(tinyTokenizerJson(), {});
  const ids: number[] = tokenizer.encode(text).ids;
  const session = await ort.InferenceSession.create(join(tiny.dir, onnxFile));
  try {
    const tensor = (xs: number[]) =>
      new ort.Tensor('int64', BigInt64Array.from(xs.map((x) => BigInt(x))), [1, xs.length]);
    const feeds: Record<string, ort.Tensor> = {
      input_ids: tensor(ids),
      attention_mask: tensor(ids.map(() => 1)),
    };
    if (withTypes) feeds.token_type_ids = tensor(ids.map(() => 0));
    const out = (await session.run(feeds)).last_hidden_state;
    const data = out?.data as Float32Array;
    return ids.map((_, t) => data.slice(t * tiny.hidden, (t + 1) * tiny.hidden));
  } finally {
    await session.release();
  }
}

function normalized(v: Float32Array): Float32Array {
  const n = norm(v);
  return v.map((x) => x / n);
}

describe('onnx embedder: mean pooling model (onnx/model.onnx, token_type_ids declared)', () => {
  let tiny: TinyBert;
  let embedder: Embedder;
  beforeAll(async () => {
    tiny = model('mean', { pooling: 'mean' });
    embedder = await embedderFor(tiny);
  });

  it('reports provider, model, dimensions and the device in use', () => {
    expect(embedder.info()).toEqual({ provider: 'onnx', model: 'tiny-bert', dimensions: 32, device: 'cpu' });
  });

  it('returns one unit-length vector of `dimensions` entries per text, in order', async () => {
    const texts = ['the quick brown fox', 'memory palace drawer', 'coffee with milk and sugar'];
    const vectors = await embedder.embed(texts, 'document');
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(32);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(maxDiff(vectors[0], vectors[1])).toBeGreaterThan(1e-3);
    const again = await embedder.embed([texts[2] ?? ''], 'document');
    expect(maxDiff(again[0], vectors[2])).toBeLessThan(1e-6);
    expect(await embedder.embed([], 'document')).toEqual([]);
  });

  it('equals the normalised masked mean of the bare model outputs', async () => {
    const text = 'the lazy dog jumps over the river';
    const rows = await bareTokenStates(tiny, 'onnx/model.onnx', text, true);
    const mean = new Float32Array(tiny.hidden);
    for (const row of rows)
      for (let d = 0; d < tiny.hidden; d++) mean[d] = (mean[d] ?? 0) + (row[d] ?? 0) / rows.length;
    const [vector] = await embedder.embed([text], 'document');
    expect(maxDiff(vector, normalized(mean))).toBeLessThan(1e-5);
  });

  it('ignores padding: a text alone and beside a much longer text embed the same', async () => {
    const short = 'green tea';
    const long = words(50);
    const [alone] = await embedder.embed([short], 'document');
    const [first, longVector] = await embedder.embed([short, long], 'document');
    const [, last] = await embedder.embed([long, short], 'document');
    expect(maxDiff(first, alone)).toBeLessThan(1e-5);
    expect(maxDiff(last, alone)).toBeLessThan(1e-5);
    expect(maxDiff(longVector, (await embedder.embed([long], 'document'))[0])).toBeLessThan(1e-5);
  });

  it('the generated model really depends on attention_mask (so the padding test has teeth)', async () => {
    const session = await ort.InferenceSession.create(join(tiny.dir, 'onnx/model.onnx'));
    try {
      const ids = new ort.Tensor('int64', BigInt64Array.from([2n, 10n, 11n, 3n, 0n, 0n]), [1, 6]);
      const types = new ort.Tensor('int64', new BigInt64Array(6), [1, 6]);
      const run = async (mask: bigint[]) =>
        (
          await session.run({
            input_ids: ids,
            token_type_ids: types,
            attention_mask: new ort.Tensor('int64', BigInt64Array.from(mask), [1, 6]),
          })
        ).last_hidden_state?.data as Float32Array;
      const masked = await run([1n, 1n, 1n, 1n, 0n, 0n]);
      const unmasked = await run([1n, 1n, 1n, 1n, 1n, 1n]);
      expect(maxDiff(masked.slice(0, 32), unmasked.slice(0, 32))).toBeGreaterThan(1e-3);
    } finally {
      await session.release();
    }
  });

  it('batches more texts than the batch size and keeps every vector with its text', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `${words(1 + (i % 9), i)} w${i % 60}`);
    const small = await embedderFor(tiny, { batchSize: 4 });
    const batched = await small.embed(texts, 'document');
    const byDefault = await embedder.embed(texts, 'document');
    expect(batched).toHaveLength(70);
    for (const [i, text] of texts.entries()) {
      const [single] = await embedder.embed([text], 'document');
      expect(maxDiff(batched[i], single)).toBeLessThan(1e-5);
      expect(maxDiff(byDefault[i], single)).toBeLessThan(1e-5);
    }
  });

  it('truncates a text longer than the model max length to the same vector as its truncated form', async () => {
    // max length 64 = [CLS] + 62 word tokens + [SEP]; every word here is one token.
    const long = words(300);
    const truncated = words(62);
    const [a, b] = await embedder.embed([long, truncated], 'document');
    expect(maxDiff(a, b)).toBeLessThan(1e-5);
    const [huge] = await embedder.embed([words(40_000)], 'document');
    expect(maxDiff(huge, b)).toBeLessThan(1e-5);
    const [notTruncated] = await embedder.embed([words(61)], 'document');
    expect(maxDiff(notTruncated, b)).toBeGreaterThan(1e-4);
  });

  it('embeds empty text and unknown words', async () => {
    const [empty, unknown] = await embedder.embed(['', 'zyxxy qwerty'], 'document');
    expect(norm(empty ?? new Float32Array())).toBeCloseTo(1, 5);
    expect(norm(unknown ?? new Float32Array())).toBeCloseTo(1, 5);
  });

  it('refuses to embed after close', async () => {
    const closing = await embedderFor(tiny);
    await closing.close();
    const err = await rejectedHubError(closing.embed(['hello'], 'document'));
    expect(err.code).toBe('memory.embed_failed');
  });
});

describe('onnx embedder: CLS pooling model (model.onnx, no token_type_ids input)', () => {
  it('pools the first token, feeding only the inputs the graph declares', async () => {
    const tiny = model('cls', { pooling: 'cls', tokenTypeIds: false, modelPath: 'model.onnx', seed: 11 });
    const embedder = await embedderFor(tiny);
    expect(embedder.info().dimensions).toBe(32);
    const text = 'seven small birds in the garden';
    const rows = await bareTokenStates(tiny, 'model.onnx', text, false);
    const [vector] = await embedder.embed([text], 'document');
    expect(maxDiff(vector, normalized(rows[0] ?? new Float32Array()))).toBeLessThan(1e-5);
    // CLS of a text still depends on the rest of the text, but not on padding.
    const [alone] = await embedder.embed(['blue'], 'document');
    const [beside] = await embedder.embed(['blue', words(40)], 'document');
    expect(maxDiff(beside, alone)).toBeLessThan(1e-5);
  });

  it('feeds int32 inputs when the graph declares int32', async () => {
    const tiny = model('int32', { inputType: 'int32' });
    const embedder = await embedderFor(tiny);
    const [v] = await embedder.embed(['the quick brown fox'], 'document');
    const reference = await embedderFor(model('int64-same-weights', {}));
    const [r] = await reference.embed(['the quick brown fox'], 'document');
    expect(maxDiff(v, r)).toBeLessThan(1e-5);
  });

  it('refuses a graph input it cannot feed, naming it', async () => {
    const tiny = model('pixels', { extraInput: 'pixel_values' });
    const err = await rejectedHubError(embedderFor(tiny));
    expect(err.code).toBe('memory.embedder_missing');
    expect(err.message).toContain('pixel_values');
  });
});

describe('onnx embedder: query prefix', () => {
  it('prepends the prompt from config_sentence_transformers.json to queries only', async () => {
    const tiny = model('prompted');
    writeFileSync(
      join(tiny.dir, 'config_sentence_transformers.json'),
      JSON.stringify({ prompts: { query: 'search for: ' } }),
    );
    const embedder = await embedderFor(tiny);
    const [query] = await embedder.embed(['red apple'], 'query');
    const [document] = await embedder.embed(['red apple'], 'document');
    const [prefixed] = await embedder.embed(['search for: red apple'], 'document');
    expect(maxDiff(query, prefixed)).toBeLessThan(1e-5);
    expect(maxDiff(query, document)).toBeGreaterThan(1e-4);
  });

  it("applies bge-small-en-v1.5's retrieval instruction from the registry", async () => {
    const tiny = model('bge-small-en-v1.5', { pooling: 'cls' });
    const embedder = await embedderFor(tiny, { model: 'bge-small-en-v1.5' });
    const [query] = await embedder.embed(['fox'], 'query');
    const [prefixed] = await embedder.embed(
      ['Represent this sentence for searching relevant passages: fox'],
      'document',
    );
    expect(maxDiff(query, prefixed)).toBeLessThan(1e-5);
  });
});

describe('onnx embedder: devices', () => {
  function capture(): { logger: Logger; lines: string[] } {
    const lines: string[] = [];
    return { logger: makeLogger('palace:embed', { level: 'debug', write: (l) => lines.push(l) }), lines };
  }

  it('falls back to CPU when CUDA is asked for and missing, logging it once', async () => {
    const tiny = model('gpu', { pooling: 'mean' });
    const { logger, lines } = capture();
    const embedder = await embedderFor(tiny, { device: 'cuda', logger });
    expect(embedder.info().device).toBe('cpu');
    const [v] = await embedder.embed(['water and fire'], 'document');
    expect(v).toHaveLength(32);
    await embedder.embed(['again'], 'document');
    const fallback = lines.filter((l) => l.includes('falling back to cpu'));
    expect(fallback).toHaveLength(1);
    expect(fallback[0]).toContain('WARN palace:embed');
    expect(fallback[0]).toContain('cuda');
  });

  it('auto ends on CPU here, as info rather than a warning; dml and coreml fall back too', async () => {
    const tiny = model('auto');
    const { logger, lines } = capture();
    expect((await embedderFor(tiny, { device: 'auto', logger })).info().device).toBe('cpu');
    const info = lines.filter((l) => l.includes('INFO palace:embed') && l.includes('embedding on cpu'));
    expect(info).toHaveLength(1);
    expect(info[0]).toContain('cuda: not installed with onnxruntime-node');
    expect(lines.some((l) => l.includes('WARN'))).toBe(false);
    expect((await embedderFor(tiny, { device: 'dml' })).info().device).toBe('cpu');
    expect((await embedderFor(tiny, { device: 'coreml' })).info().device).toBe('cpu');
  });

  it('refuses an unknown device with a clear config error', async () => {
    const err = await rejectedHubError(embedderFor(model('tpu'), { device: 'tpu' }));
    expect(err.code).toBe('hub.config');
    expect(err.message).toContain('cpu, cuda, dml, coreml, auto');
  });
});

describe('onnx embedder: missing or broken files', () => {
  it('names every missing required file and where it goes', async () => {
    const dir = join(tmp.path, 'empty');
    mkdirSync(dir, { recursive: true });
    const err = await rejectedHubError(
      createOnnxEmbedder({ provider: 'onnx', model: 'empty', modelDir: dir, device: 'cpu' }),
    );
    expect(err.code).toBe('memory.embedder_missing');
    for (const file of ['onnx/model.onnx', 'tokenizer.json', 'config.json'])
      expect(err.message).toContain(join(dir, file));
    expect(err.message).toContain('(or model.onnx)');
    const missing = (err.data?.missing as { file: string; required: boolean }[])
      .filter((m) => m.required)
      .map((m) => m.file);
    expect(missing).toEqual(['onnx/model.onnx', 'tokenizer.json', 'config.json']);
  });

  it('names only what is missing, and for a known model where to download it from', async () => {
    const tiny = model('all-MiniLM-L6-v2');
    rmSync(join(tiny.dir, 'tokenizer.json'));
    const err = await rejectedHubError(
      createOnnxEmbedder({ provider: 'onnx', model: 'all-MiniLM-L6-v2', modelDir: tiny.dir, device: 'cpu' }),
    );
    expect(err.code).toBe('memory.embedder_missing');
    expect(err.message).toContain('tokenizer.json missing');
    expect(err.message).toContain(
      'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/tokenizer.json',
    );
    expect(err.message).not.toContain(`${join(tiny.dir, 'config.json')}`);
    expect(err.message).toContain('palace set-embedder --model all-MiniLM-L6-v2');
  });

  it('reports an ONNX file that does not load, and a malformed tokenizer.json', async () => {
    const broken = model('broken-onnx');
    writeFileSync(join(broken.dir, 'onnx/model.onnx'), 'not a model');
    const err = await rejectedHubError(embedderFor(broken));
    expect(err.code).toBe('memory.embedder_missing');
    expect(err.message).toContain(join(broken.dir, 'onnx/model.onnx'));

    const badJson = model('broken-tokenizer');
    writeFileSync(join(badJson.dir, 'tokenizer.json'), '{ nope');
    const err2 = await rejectedHubError(embedderFor(badJson));
    expect(err2.code).toBe('memory.embedder_missing');
    expect(err2.message).toContain('tokenizer.json is not valid JSON');
  });
});
