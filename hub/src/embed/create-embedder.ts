// Builds an Embedder from a spec. Runs inside the embedding worker (or in-process for tests).

import { createBundledEmbedder } from './bundled-embedder.js';
import type { Embedder } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

export async function createEmbedder(spec: EmbedderSpec): Promise<Embedder> {
  switch (spec.provider) {
    case 'bundled':
      return createBundledEmbedder();
    case 'onnx': {
      const { createOnnxEmbedder } = await import('./onnx-embedder.js');
      return createOnnxEmbedder(spec);
    }
    case 'openai-compat': {
      const { createOpenAiCompatEmbedder } = await import('./openai-compat-embedder.js');
      return createOpenAiCompatEmbedder(spec);
    }
  }
}
