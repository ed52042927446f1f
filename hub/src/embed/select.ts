// Chooses the embedder for a palace and keeps the palace's record of it (`<palace>/embedder.json`).
// A palace opened with another embedder than the one it records is refused, never silently mixed.

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { PalaceConfig } from '../config.js';
import { HubError } from '../errors.js';
import { writePrivateFile } from '../registration.js';
import { BUNDLED_DIMENSIONS, BUNDLED_MODEL } from './bundled-embedder.js';
import type { EmbedderInfo } from './embedder.js';
import { modelStatus, onnxSpecFor } from './model-files.js';
import type { EmbedderSpec } from './spec.js';

export const DEFAULT_ONNX_MODEL = 'all-MiniLM-L6-v2';

export interface EmbedderRecord {
  provider: string;
  model: string;
  dimensions: number;
  recorded_at: string;
}

export function recordPath(palacePath: string): string {
  return join(palacePath, 'embedder.json');
}

export function readEmbedderRecord(palacePath: string): EmbedderRecord | undefined {
  let text: string;
  try {
    text = readFileSync(recordPath(palacePath), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const r = JSON.parse(text) as EmbedderRecord;
    if (typeof r.model === 'string' && typeof r.dimensions === 'number' && typeof r.provider === 'string') return r;
  } catch {
    // reported below
  }
  throw new HubError('hub.config', `${recordPath(palacePath)} is unreadable; restore it or run \`palace set-embedder --model NAME --force\``);
}

export function writeEmbedderRecord(palacePath: string, info: Pick<EmbedderInfo, 'provider' | 'model' | 'dimensions'>, now = new Date()): EmbedderRecord {
  mkdirSync(palacePath, { recursive: true, mode: 0o700 });
  const record: EmbedderRecord = { provider: info.provider, model: info.model, dimensions: info.dimensions, recorded_at: now.toISOString() };
  writePrivateFile(recordPath(palacePath), JSON.stringify(record, null, 2) + '\n');
  return record;
}


function specFor(provider: string, model: string, config: Readonly<PalaceConfig>): EmbedderSpec {
  if (provider === 'bundled') return { provider: 'bundled' };
  if (provider === 'openai-compat') {
    if (!config.embeddingApiUrl)
      throw new HubError('hub.config', 'the openai-compat embedder needs PALACE_EMBEDDING_API_URL (e.g. http://gpu-box:8000/v1)', { field: 'PALACE_EMBEDDING_API_URL' });
    return { provider: 'openai-compat', url: config.embeddingApiUrl, model, apiKey: config.embeddingApiKey };
  }
  return onnxSpecFor(config.home, model, config.embeddingDevice);
}

/**
 * What to build: the palace's recorded embedder when it has one (configuration naming a different
 * model is refused); else the configured one; else the default ONNX model when its files are
 * present; else the bundled model (the caller announces that once).
 */
export function chooseEmbedder(config: Readonly<PalaceConfig>, palacePath: string): { spec: EmbedderSpec; fallback: boolean } {
  const record = readEmbedderRecord(palacePath);
  if (record) {
    if (config.embeddingModel && config.embeddingModel !== record.model)
      throw new HubError(
        'memory.embedder_mismatch',
        `this palace was built with ${record.model} (${record.dimensions}-d) but PALACE_EMBEDDING_MODEL is ${config.embeddingModel}; ` +
          `unset it, or run \`palace set-embedder --model ${config.embeddingModel} --force\` and then \`palace repair --mode rebuild\` to re-embed every drawer`,
      );
    return { spec: specFor(record.provider, record.model, config), fallback: false };
  }
  if (config.embeddingProvider) {
    const model = config.embeddingModel ?? (config.embeddingProvider === 'bundled' ? BUNDLED_MODEL : DEFAULT_ONNX_MODEL);
    return { spec: specFor(config.embeddingProvider, model, config), fallback: false };
  }
  if (config.embeddingModel) {
    if (config.embeddingModel === BUNDLED_MODEL) return { spec: { provider: 'bundled' }, fallback: false };
    return { spec: specFor('onnx', config.embeddingModel, config), fallback: false };
  }
  if (modelStatus(config.home, DEFAULT_ONNX_MODEL).ready) return { spec: specFor('onnx', DEFAULT_ONNX_MODEL, config), fallback: false };
  return { spec: { provider: 'bundled' }, fallback: true };
}

export { BUNDLED_DIMENSIONS, BUNDLED_MODEL };
