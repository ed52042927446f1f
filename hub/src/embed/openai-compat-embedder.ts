// Placeholder while the openai-compat provider is being written (replaced by its real implementation).

import { HubError } from '../errors.js';
import type { Embedder } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

export function createOpenAiCompatEmbedder(_spec: Extract<EmbedderSpec, { provider: 'openai-compat' }>): Promise<Embedder> {
  return Promise.reject(new HubError('memory.embedder_missing', 'the openai-compat embedder is not available in this build'));
}
