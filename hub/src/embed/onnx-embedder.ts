// Placeholder while the onnx provider is being written (replaced by its real implementation).

import { HubError } from '../errors.js';
import type { Embedder } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

export function createOnnxEmbedder(_spec: Extract<EmbedderSpec, { provider: 'onnx' }>): Promise<Embedder> {
  return Promise.reject(new HubError('memory.embedder_missing', 'the onnx embedder is not available in this build'));
}
